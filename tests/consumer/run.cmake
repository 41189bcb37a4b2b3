# Installs the built project into a scratch prefix, checks that only the public API was installed,
# then configures, builds and runs an outside project that uses find_package(dps) and links dps::dps,
# and compiles every installed header alone.
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
execute_process(COMMAND ${WORK}/build/consumer RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer failed")
endif()
