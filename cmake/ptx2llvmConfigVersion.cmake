# ptx2llvmConfigVersion.cmake: the package version for find_package(ptx2llvm X.Y), read from the
# source tree's Cargo.toml; cmake/CMakeLists.txt writes the version into the copies it puts in
# its build tree and installs (configure_file replaces the placeholder below).
# Compatible: the same major version and at least the requested one; while the major version is
# 0, the same minor version too (0.x releases may break the interface).

set(PACKAGE_VERSION "@ptx2llvm_PACKAGE_VERSION@")
if(PACKAGE_VERSION MATCHES "@")
    set(PACKAGE_VERSION "")
endif()
if(PACKAGE_VERSION STREQUAL "" AND EXISTS "${CMAKE_CURRENT_LIST_DIR}/../Cargo.toml")
    file(STRINGS "${CMAKE_CURRENT_LIST_DIR}/../Cargo.toml" _ptx2llvm_version_line
         REGEX "^version *= *\"[0-9]+\\.[0-9]+\\.[0-9]+" LIMIT_COUNT 1)
    if(_ptx2llvm_version_line MATCHES "\"([0-9]+\\.[0-9]+\\.[0-9]+)")
        set(PACKAGE_VERSION "${CMAKE_MATCH_1}")
    endif()
endif()
if(PACKAGE_VERSION STREQUAL "")
    set(PACKAGE_VERSION "0.0.0")
    set(PACKAGE_VERSION_UNSUITABLE TRUE)
    return()
endif()

if(NOT PACKAGE_FIND_VERSION)
    set(PACKAGE_VERSION_COMPATIBLE TRUE)
elseif(PACKAGE_VERSION VERSION_LESS PACKAGE_FIND_VERSION)
    set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
    string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" _ptx2llvm_mm "${PACKAGE_VERSION}")
    set(_ptx2llvm_major "${CMAKE_MATCH_1}")
    set(_ptx2llvm_minor "${CMAKE_MATCH_2}")
    if(NOT PACKAGE_FIND_VERSION_MAJOR STREQUAL _ptx2llvm_major)
        set(PACKAGE_VERSION_COMPATIBLE FALSE)
    elseif(_ptx2llvm_major STREQUAL "0" AND NOT "${PACKAGE_FIND_VERSION_MINOR}" STREQUAL ""
           AND NOT PACKAGE_FIND_VERSION_MINOR STREQUAL _ptx2llvm_minor)
        set(PACKAGE_VERSION_COMPATIBLE FALSE)
    else()
        set(PACKAGE_VERSION_COMPATIBLE TRUE)
        if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
            set(PACKAGE_VERSION_EXACT TRUE)
        endif()
    endif()
endif()
