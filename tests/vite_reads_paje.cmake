# ViTE, the Paje viewer users open our Paje exports in, reads one without an error or a warning,
# and its SVG export draws every node's and thread's container.
#   cmake -DDPS_TRACE=... -DVITE=... -DTRACE=run.dpstrace -DDIR=scratch -P vite_reads_paje.cmake
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})
execute_process(COMMAND ${DPS_TRACE} paje ${TRACE} ${DIR}/run.paje RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dps-trace paje failed: ${rc}")
endif()
# ViTE writes its log.txt into the working directory; offscreen, it needs no display.
execute_process(COMMAND ${CMAKE_COMMAND} -E env QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR=${DIR}
                        ${VITE} -e ${DIR}/run.svg ${DIR}/run.paje
                WORKING_DIRECTORY ${DIR} OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc TIMEOUT 120)
if(NOT rc EQUAL 0 OR NOT out MATCHES "(^|\n)0 errors and 0 warnings were found")
  message(FATAL_ERROR "ViTE did not read the Paje file cleanly (exit ${rc}):\n${out}")
endif()
file(READ ${DIR}/run.svg svg)
foreach(container "node 0" "node 4" "master #1" "workers #2" "workers #6")
  string(FIND "${svg}" ">${container}<" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "ViTE's drawing has no container '${container}'")
  endif()
endforeach()
message(STATUS "ViTE read the Paje export cleanly and drew every container")
