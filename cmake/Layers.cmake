# The layers of cleansweep's core, bottom up: the folders of src/ each one holds and the layers it
# uses directly (what they use, it may use too). Written once, here: src/CMakeLists.txt builds one
# static library per layer that links exactly these, cmake/CheckLayers.cmake refuses an #include
# that crosses this graph (at configure time, and as the `layers` test), and docs/architecture.md's
# "uses" column is checked against it by the same test.
set(CLEANSWEEP_LAYERS util domain config samplers pruners study launch transport gpu coordinator worker report cli
    trainers)

set(CLEANSWEEP_LAYER_util_FOLDERS util)
set(CLEANSWEEP_LAYER_util_USES "")
set(CLEANSWEEP_LAYER_domain_FOLDERS trial space)
set(CLEANSWEEP_LAYER_domain_USES util)
set(CLEANSWEEP_LAYER_config_FOLDERS config)
set(CLEANSWEEP_LAYER_config_USES domain)
set(CLEANSWEEP_LAYER_samplers_FOLDERS samplers)
set(CLEANSWEEP_LAYER_samplers_USES config)
set(CLEANSWEEP_LAYER_pruners_FOLDERS pruners)
set(CLEANSWEEP_LAYER_pruners_USES config)
set(CLEANSWEEP_LAYER_study_FOLDERS study)
set(CLEANSWEEP_LAYER_study_USES config)
set(CLEANSWEEP_LAYER_launch_FOLDERS launch)
set(CLEANSWEEP_LAYER_launch_USES domain)
set(CLEANSWEEP_LAYER_transport_FOLDERS transport)
set(CLEANSWEEP_LAYER_transport_USES domain)
set(CLEANSWEEP_LAYER_gpu_FOLDERS gpu)
set(CLEANSWEEP_LAYER_gpu_USES "")
set(CLEANSWEEP_LAYER_coordinator_FOLDERS coordinator)
set(CLEANSWEEP_LAYER_coordinator_USES samplers pruners study transport)
set(CLEANSWEEP_LAYER_worker_FOLDERS worker)
set(CLEANSWEEP_LAYER_worker_USES config gpu launch transport)
set(CLEANSWEEP_LAYER_report_FOLDERS report)
set(CLEANSWEEP_LAYER_report_USES study)
set(CLEANSWEEP_LAYER_cli_FOLDERS cli)
set(CLEANSWEEP_LAYER_cli_USES coordinator worker report)
# The libtorch trainer: <cleansweep/trial.hpp> like any trial program, and the GPU probe.
set(CLEANSWEEP_LAYER_trainers_FOLDERS trainers)
set(CLEANSWEEP_LAYER_trainers_USES gpu)

# Outside headers that only one layer may include: "HEADER-REGEX=LAYER". The others cannot even
# find HDF5's and MPI's headers (those include paths belong to that layer's library alone).
set(CLEANSWEEP_OWNED_HEADERS "^hdf5\\.h$=study" "^H5[A-Za-z]*\\.h$=study" "^mpi\\.h$=transport" "^torch/=trainers"
    "^CLI/=cli|trainers")

# cleansweep_layer_closure(LAYER OUT): LAYER and every layer it uses, directly or not.
function(cleansweep_layer_closure layer out)
  set(seen "")
  set(todo ${layer})
  while(todo)
    list(POP_FRONT todo current)
    if(current IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${current})
    list(APPEND todo ${CLEANSWEEP_LAYER_${current}_USES})
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()
