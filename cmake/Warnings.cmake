# Warnings live in one INTERFACE target that our own targets link PRIVATE, so users who build
# cleansweep as a dependency never inherit them (HighFive does the same).
add_library(cleansweep_warnings INTERFACE)
target_compile_options(cleansweep_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wnon-virtual-dtor -Woverloaded-virtual
  # GCC 12 reports false positives inside std::variant and nlohmann::json at -O2 (GCC PR 105562).
  $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized -Wno-free-nonheap-object>
  $<$<BOOL:${CLEANSWEEP_WERROR}>:-Werror>)
