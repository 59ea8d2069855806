# ctest packaging.install-tree (cmake -P): `cmake --install` into a scratch prefix gives a
# runnable tree with the desktop integration files and icons of the right sizes.
# -DBUILD_DIR=... -DAPP_ID=... -DICON_SIZES="16;24;..." -DVERSION=...
set(prefix ${BUILD_DIR}/install-tree-check)
file(REMOVE_RECURSE ${prefix})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix}
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "cmake --install failed: ${err}")
endif()

set(expect bin/map-inspector bin/map-inspector-cli
           share/applications/${APP_ID}.desktop share/metainfo/${APP_ID}.metainfo.xml
           share/icons/hicolor/scalable/apps/${APP_ID}.svg
           # the collector (docs/fleet.md); the example under PREFIX/etc for a prefix other than /usr
           lib/systemd/system/map-inspector-collector@.service lib/map-inspector/collector-start
           etc/map-inspector/collector.conf.example share/doc/map-inspector/fleet.md)
foreach(size IN LISTS ICON_SIZES)
  set(png share/icons/hicolor/${size}x${size}/apps/${APP_ID}.png)
  list(APPEND expect ${png})
  if(EXISTS ${prefix}/${png})
    # PNG: 8-byte signature, IHDR length and type, then width and height (big-endian).
    file(READ ${prefix}/${png} ihdr OFFSET 16 LIMIT 8 HEX)
    math(EXPR width "0x${ihdr}" OUTPUT_FORMAT DECIMAL) # whole 8 bytes: width * 2^32 + height
    math(EXPR expected "(${size} << 32) + ${size}")
    if(NOT width EQUAL expected)
      message(FATAL_ERROR "${png} is not ${size}x${size} (IHDR ${ihdr})")
    endif()
  endif()
endforeach()
foreach(f IN LISTS expect)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "missing from the install tree: ${f}")
  endif()
endforeach()

foreach(program map-inspector-cli map-inspector)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env QT_QPA_PLATFORM=offscreen
                          ${prefix}/bin/${program} --version
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 30)
  string(STRIP "${out}" out)
  if(rc OR NOT out MATCHES "${VERSION}")
    message(FATAL_ERROR "${program} --version from the install tree: status ${rc}, '${out}'")
  endif()
  message(STATUS "${program} --version: ${out}")
endforeach()
# The collector's wrapper finds the CLI of its own tree (PREFIX/lib/map-inspector -> PREFIX/bin).
execute_process(COMMAND ${CMAKE_COMMAND} -E env MAPI_URL=ws://127.0.0.1:1
                        sh ${prefix}/lib/map-inspector/collector-start --print check
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 30)
string(FIND "${out}" "\n" newline)
string(SUBSTRING "${out}" 0 ${newline} program) # its first line (-1: all of it)
file(REAL_PATH ${prefix}/bin/map-inspector-cli expected_program)
if(rc OR NOT program STREQUAL expected_program)
  message(FATAL_ERROR "collector-start --print from the install tree: status ${rc}, program '${program}' "
                      "(expected ${expected_program}) ${err}")
endif()
# Built with mimalloc: the installed CLI finds it and it has replaced malloc (app/Allocator.cpp).
if(MIMALLOC)
  execute_process(COMMAND ${prefix}/bin/map-inspector-cli --version OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 30)
  if(NOT out MATCHES "allocator: mimalloc")
    message(FATAL_ERROR "map-inspector-cli from the install tree does not run on mimalloc: '${out}'")
  endif()
endif()

list(LENGTH expect n)
message(STATUS "install tree ok: ${n} expected files, icons of the right sizes")
file(REMOVE_RECURSE ${prefix})
