# CLEANSWEEP_SANITIZE=address,undefined instruments every target of this build.
if(CLEANSWEEP_SANITIZE)
  add_compile_options(-fsanitize=${CLEANSWEEP_SANITIZE} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${CLEANSWEEP_SANITIZE})
endif()
