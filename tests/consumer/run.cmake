# Installs the built project into a scratch prefix, checks that only the public API was installed
# (no kernel or detail/ header, no TBB or Asio include), then configures, builds and runs an outside
# project that uses find_package(dps): one program real and simulated, one on the simulator's and
# the cluster library's public faces, a scheduler library the installed dps-cluster loads; and
# compiles every installed header alone.
cmake_minimum_required(VERSION 3.25)  # IN_LIST
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "install failed")
endif()
# Only the public API is installed: every dps header an installed header includes is installed
# too, and none includes a dependency the package config does not find (Asio is the TCP backend's own).
set(include ${WORK}/prefix/include)
file(GLOB_RECURSE installed RELATIVE ${include} ${include}/*)
if(NOT "dps/dps.hpp" IN_LIST installed)
  message(FATAL_ERROR "dps/dps.hpp is not installed")
endif()
foreach(header IN LISTS installed)
  if(header MATCHES "(^|/)(detail|kernel)/")
    message(FATAL_ERROR "${header} is installed: the kernel and detail/ headers are not part of the API")
  endif()
  file(STRINGS ${include}/${header} private REGEX "^#include [<\"](tbb/|oneapi/|asio)")
  if(private)
    message(FATAL_ERROR "the installed ${header} includes a TBB or Asio header: ${private}")
  endif()
  file(STRINGS ${include}/${header} lines REGEX "^#include [<\"](dps/|asio)")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^#include [<\"]([^>\"]+)[>\"].*" "\\1" named "${line}")
    if(NOT named IN_LIST installed)
      message(FATAL_ERROR "the installed ${header} includes ${named}, which is not installed")
    endif()
  endforeach()
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE}/tests/consumer -B ${WORK}/build -DCMAKE_PREFIX_PATH=${WORK}/prefix
                -DDPS_INCLUDE=${include} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configure failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "build failed")
endif()
# run(NAME EXPECTED ARGS...): runs the program; its output must match EXPECTED.
function(run name expected)
  execute_process(COMMAND ${WORK}/build/${name} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 120)
  if(rc OR NOT out MATCHES "${expected}")
    message(FATAL_ERROR "${name} ${ARGN}: exit ${rc}, printed '${out}' (expected ${expected}); stderr: ${err}")
  endif()
  message(STATUS "${name} ${ARGN}: ${out}")
endfunction()
run(consumer "consumer: 4950 on 2 nodes, real" --nodes 2)
run(consumer-sim "consumer: 4950 on 2 nodes, simulated" --nodes 2 --pdexec)
run(simulate "simulate: 0\\.5[0-9]* s and 0\\.5[0-9]* s on 4 of 8 nodes\nschedule: 4 jobs")
file(WRITE ${WORK}/two.json "{\"nodes\": 2, \"jobs\": [{\"kind\": \"rigid\", \"size\": 2, \"runtime\": 5}]}\n")
execute_process(COMMAND ${WORK}/prefix/bin/dps-cluster --workload ${WORK}/two.json --scheduler ${WORK}/build/libsmallest_first.so
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(rc OR NOT out MATCHES "\"scheduler\": \"smallest-first\"")
  message(FATAL_ERROR "the installed dps-cluster with a scheduler library: exit ${rc}, printed '${out}'; stderr: ${err}")
endif()
message("consumer: every program ran")
