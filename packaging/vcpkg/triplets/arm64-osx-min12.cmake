# Apple silicon, static libraries built for the same minimum macOS as the app (Info.plist's
# LSMinimumSystemVersion, CI's MACOSX_DEPLOYMENT_TARGET). Homebrew's bottles target the runner's
# own macOS, so an app bundling them would not start on older systems.
set(VCPKG_TARGET_ARCHITECTURE arm64)
set(VCPKG_CRT_LINKAGE dynamic)
set(VCPKG_LIBRARY_LINKAGE static)
set(VCPKG_CMAKE_SYSTEM_NAME Darwin)
set(VCPKG_OSX_ARCHITECTURES arm64)
set(VCPKG_OSX_DEPLOYMENT_TARGET 12.0)
