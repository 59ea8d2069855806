# CPack pre-build script (CPACK_PRE_BUILD_SCRIPTS): signs the programs CPack has staged, before
# they are packed into the installer. Driven by environment variables so that no secret is ever
# written to the CMake cache or to CPackConfig.cmake:
#
#   macOS    MAPI_CODESIGN_IDENTITY  e.g. "Developer ID Application: Name (TEAMID)", from a
#                                    keychain imported beforehand. Unset: an ad-hoc signature
#                                    (enough to run on Apple silicon, not for Gatekeeper).
#   Windows  MAPI_SIGN_PFX           path of a .pfx code-signing certificate
#            MAPI_SIGN_PFX_PASSWORD  its password
#            MAPI_SIGN_TIMESTAMP_URL RFC 3161 timestamp server
#            Unset MAPI_SIGN_PFX: nothing is signed.
#   Linux    nothing to do.
#
# The finished DMG / installer is signed (and notarised) by CI afterwards.
set(staging "${CPACK_TEMPORARY_INSTALL_DIRECTORY}")

function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc)
  if(rc)
    list(JOIN ARGV " " cmd)
    message(FATAL_ERROR "signing failed (${rc}): ${cmd}")
  endif()
endfunction()

if(CMAKE_HOST_APPLE)
  set(identity "$ENV{MAPI_CODESIGN_IDENTITY}")
  set(options --force --sign)
  if(identity STREQUAL "")
    set(identity "-")
  else()
    list(PREPEND options --options runtime --timestamp)
  endif()
  file(GLOB_RECURSE bundles LIST_DIRECTORIES true "${staging}/*.app")
  list(FILTER bundles INCLUDE REGEX "\\.app$")
  list(FILTER bundles EXCLUDE REGEX "\\.app/.*\\.app$") # the top-level bundle only
  foreach(app IN LISTS bundles)
    if(NOT IS_DIRECTORY "${app}")
      continue()
    endif()
    message(STATUS "Signing ${app} (identity: ${identity})")
    # Inside out: libraries and plugins, frameworks, extra executables, then the bundle.
    file(GLOB_RECURSE dylibs "${app}/Contents/Frameworks/*.dylib" "${app}/Contents/PlugIns/*.dylib")
    file(GLOB frameworks LIST_DIRECTORIES true "${app}/Contents/Frameworks/*.framework")
    file(GLOB executables "${app}/Contents/MacOS/*")
    get_filename_component(main "${app}" NAME_WE)
    list(REMOVE_ITEM executables "${app}/Contents/MacOS/${main}")
    foreach(item IN LISTS dylibs frameworks executables)
      run(codesign ${options} "${identity}" "${item}")
    endforeach()
    run(codesign ${options} "${identity}" "${app}")
    run(codesign --verify --deep --strict "${app}")
  endforeach()

elseif(CMAKE_HOST_WIN32 AND NOT "$ENV{MAPI_SIGN_PFX}" STREQUAL "")
  find_program(SIGNTOOL signtool)
  if(NOT SIGNTOOL)
    # Not on PATH outside a developer prompt: take the newest Windows SDK's.
    file(GLOB signtools "C:/Program Files (x86)/Windows Kits/10/bin/10.*/x64/signtool.exe")
    list(SORT signtools COMPARE NATURAL ORDER DESCENDING)
    list(GET signtools 0 SIGNTOOL)
  endif()
  file(GLOB_RECURSE programs "${staging}/*/map-inspector.exe" "${staging}/*/map-inspector-cli.exe")
  set(timestamp "$ENV{MAPI_SIGN_TIMESTAMP_URL}")
  set(ts_options)
  if(NOT timestamp STREQUAL "")
    set(ts_options /tr "${timestamp}" /td SHA256)
  endif()
  message(STATUS "Signing ${programs}")
  run("${SIGNTOOL}" sign /fd SHA256 /f "$ENV{MAPI_SIGN_PFX}" /p "$ENV{MAPI_SIGN_PFX_PASSWORD}"
      ${ts_options} ${programs})
endif()
