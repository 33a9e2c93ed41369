# ptx2llvmConfig.cmake: the CMake package of ptx2llvm.
#
#     find_package(ptx2llvm 0.1 REQUIRED)        # -Dptx2llvm_DIR=<this folder> or an install prefix
#     add_executable(app main.cpp)
#     ptx2llvm_add_kernels(app SOURCES kernels.ptx)   # kernels.ptx.h: kernels.ptx's KERNEL_launch(...)
#
# It works from three places:
#   - the source tree: ptx2llvm_DIR=<repo>/cmake uses what `cargo build --release` made in
#     <repo>/target/release (ptx2llvm_PROFILE=debug for target/debug; $CARGO_TARGET_DIR is
#     honoured);
#   - the build tree of cmake/CMakeLists.txt (the CMake wrapper around cargo): ptx2llvm_DIR=<build>;
#   - an installation (`cmake --install <build> --prefix P`): ptx2llvm_DIR=P/lib/cmake/ptx2llvm,
#     or just CMAKE_PREFIX_PATH=P.
#
# Provides:
#   ptx2llvm::ptx2llvm   the C API library (include/ptx2llvm.h: compile PTX at run time, buffers,
#                        launches) with its include directory; shared (libptx2llvm.so) unless
#                        ptx2llvm_USE_STATIC is ON (libptx2llvm.a plus libLLVM, pthread, dl, m)
#   ptx2llvm::runtime    what objects from `ptx2llvm --target cpu --emit obj` need: the runtime
#                        (the same library) and include/ptx2llvm_rt.h (ptx2llvm_rt_launch)
#   ptx2llvm::compiler   the ptx2llvm executable (imported); also PTX2LLVM_EXECUTABLE
#   ptx2llvm_add_kernels(<target> SOURCES a.ptx ... [ARCH sm_XX] [OPT_LEVEL 0-3])
#                        see ptx2llvmKernels.cmake
#   ptx2llvm_VERSION, ptx2llvm_INCLUDE_DIR, ptx2llvm_LIBRARY_DIR
#
# Paths can be forced with PTX2LLVM_EXECUTABLE, ptx2llvm_LIBRARY_DIR and ptx2llvm_INCLUDE_DIR.

if(CMAKE_VERSION VERSION_LESS 3.16)
    set(ptx2llvm_FOUND FALSE)
    set(ptx2llvm_NOT_FOUND_MESSAGE "ptx2llvm needs CMake 3.16 or newer")
    return()
endif()
cmake_policy(PUSH)
cmake_policy(VERSION 3.16)

# ---- Where the pieces are ----------------------------------------------------------------------
if(EXISTS "${CMAKE_CURRENT_LIST_DIR}/ptx2llvmPaths.cmake")
    # A build tree of cmake/CMakeLists.txt, or an installation: the paths were written there.
    include("${CMAKE_CURRENT_LIST_DIR}/ptx2llvmPaths.cmake")
elseif(EXISTS "${CMAKE_CURRENT_LIST_DIR}/../Cargo.toml")
    # The source tree: cargo's output folder.
    get_filename_component(_ptx2llvm_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
    if(NOT ptx2llvm_PROFILE)
        set(ptx2llvm_PROFILE release)
    endif()
    if(DEFINED ENV{CARGO_TARGET_DIR} AND NOT "$ENV{CARGO_TARGET_DIR}" STREQUAL "")
        get_filename_component(_ptx2llvm_target_dir "$ENV{CARGO_TARGET_DIR}" ABSOLUTE
                               BASE_DIR "${_ptx2llvm_root}")
    else()
        set(_ptx2llvm_target_dir "${_ptx2llvm_root}/target")
    endif()
    set(_ptx2llvm_bin "${_ptx2llvm_target_dir}/${ptx2llvm_PROFILE}/ptx2llvm")
    set(_ptx2llvm_libdir "${_ptx2llvm_target_dir}/${ptx2llvm_PROFILE}")
    set(_ptx2llvm_incdir "${_ptx2llvm_root}/include")
    set(_ptx2llvm_cmakedir "${CMAKE_CURRENT_LIST_DIR}")
    set(_ptx2llvm_hint "run `cargo build --release` in ${_ptx2llvm_root} (see its README)")
else()
    set(ptx2llvm_FOUND FALSE)
    set(ptx2llvm_NOT_FOUND_MESSAGE
        "${CMAKE_CURRENT_LIST_FILE} is neither in ptx2llvm's source tree nor next to a ptx2llvmPaths.cmake")
    cmake_policy(POP)
    return()
endif()

if(NOT PTX2LLVM_EXECUTABLE)
    set(PTX2LLVM_EXECUTABLE "${_ptx2llvm_bin}")
endif()
if(NOT ptx2llvm_LIBRARY_DIR)
    set(ptx2llvm_LIBRARY_DIR "${_ptx2llvm_libdir}")
endif()
if(NOT ptx2llvm_INCLUDE_DIR)
    set(ptx2llvm_INCLUDE_DIR "${_ptx2llvm_incdir}")
endif()

# Inside a project that add_subdirectory()s cmake/CMakeLists.txt nothing is built yet at
# configure time: the targets point where cargo will put the files, and are global.
set(_ptx2llvm_global "")
if(ptx2llvm_SUBPROJECT)
    set(_ptx2llvm_global GLOBAL)
endif()

set(_ptx2llvm_missing "")
foreach(_f "${PTX2LLVM_EXECUTABLE}" "${ptx2llvm_INCLUDE_DIR}/ptx2llvm.h"
           "${ptx2llvm_INCLUDE_DIR}/ptx2llvm_rt.h")
    if(NOT EXISTS "${_f}")
        list(APPEND _ptx2llvm_missing "${_f}")
    endif()
endforeach()
if(ptx2llvm_USE_STATIC)
    set(_ptx2llvm_lib "${ptx2llvm_LIBRARY_DIR}/${CMAKE_STATIC_LIBRARY_PREFIX}ptx2llvm${CMAKE_STATIC_LIBRARY_SUFFIX}")
else()
    set(_ptx2llvm_lib "${ptx2llvm_LIBRARY_DIR}/${CMAKE_SHARED_LIBRARY_PREFIX}ptx2llvm${CMAKE_SHARED_LIBRARY_SUFFIX}")
endif()
if(NOT EXISTS "${_ptx2llvm_lib}")
    list(APPEND _ptx2llvm_missing "${_ptx2llvm_lib}")
endif()
if(_ptx2llvm_missing AND NOT ptx2llvm_SUBPROJECT)
    string(REPLACE ";" ", " _ptx2llvm_missing "${_ptx2llvm_missing}")
    set(ptx2llvm_FOUND FALSE)
    set(ptx2llvm_NOT_FOUND_MESSAGE "ptx2llvm is not built: missing ${_ptx2llvm_missing}")
    if(_ptx2llvm_hint)
        string(APPEND ptx2llvm_NOT_FOUND_MESSAGE "; ${_ptx2llvm_hint}")
    endif()
    cmake_policy(POP)
    return()
endif()

# ---- Version -----------------------------------------------------------------------------------
if(NOT ptx2llvm_VERSION AND PACKAGE_VERSION)
    set(ptx2llvm_VERSION "${PACKAGE_VERSION}")
endif()
if(NOT ptx2llvm_VERSION AND EXISTS "${PTX2LLVM_EXECUTABLE}")
    execute_process(COMMAND "${PTX2LLVM_EXECUTABLE}" --version
                    OUTPUT_VARIABLE _ptx2llvm_v OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_ptx2llvm_v MATCHES "([0-9]+\\.[0-9]+\\.[0-9]+)")
        set(ptx2llvm_VERSION "${CMAKE_MATCH_1}")
    endif()
endif()

# ---- Imported targets --------------------------------------------------------------------------
if(NOT TARGET ptx2llvm::compiler)
    add_executable(ptx2llvm::compiler IMPORTED ${_ptx2llvm_global})
    set_target_properties(ptx2llvm::compiler PROPERTIES IMPORTED_LOCATION "${PTX2LLVM_EXECUTABLE}")
endif()

if(NOT TARGET ptx2llvm::ptx2llvm)
    if(ptx2llvm_USE_STATIC)
        add_library(ptx2llvm::ptx2llvm STATIC IMPORTED ${_ptx2llvm_global})
        # The static library holds the Rust code, inkwell included: it needs libLLVM.
        if(NOT ptx2llvm_LLVM_LIBRARY)
            find_program(_ptx2llvm_llvm_config NAMES llvm-config-22 llvm-config
                         HINTS "$ENV{LLVM_SYS_221_PREFIX}/bin" /usr/lib/llvm-22/bin)
            if(_ptx2llvm_llvm_config)
                execute_process(COMMAND "${_ptx2llvm_llvm_config}" --libdir
                                OUTPUT_VARIABLE _ptx2llvm_llvm_libdir OUTPUT_STRIP_TRAILING_WHITESPACE)
            endif()
            find_library(ptx2llvm_LLVM_LIBRARY NAMES LLVM LLVM-22 HINTS "${_ptx2llvm_llvm_libdir}")
        endif()
        find_package(Threads REQUIRED)
        set_target_properties(ptx2llvm::ptx2llvm PROPERTIES
            IMPORTED_LOCATION "${_ptx2llvm_lib}"
            INTERFACE_LINK_LIBRARIES "${ptx2llvm_LLVM_LIBRARY};Threads::Threads;${CMAKE_DL_LIBS};m")
    else()
        add_library(ptx2llvm::ptx2llvm SHARED IMPORTED ${_ptx2llvm_global})
        # cargo's cdylib has no SONAME: link it by -L/-l, with the folder in the build RPATH.
        set_target_properties(ptx2llvm::ptx2llvm PROPERTIES
            IMPORTED_LOCATION "${_ptx2llvm_lib}"
            IMPORTED_NO_SONAME TRUE)
    endif()
    set_target_properties(ptx2llvm::ptx2llvm PROPERTIES
        INTERFACE_INCLUDE_DIRECTORIES "${ptx2llvm_INCLUDE_DIR}")
endif()

if(NOT TARGET ptx2llvm::runtime)
    add_library(ptx2llvm::runtime INTERFACE IMPORTED ${_ptx2llvm_global})
    set_target_properties(ptx2llvm::runtime PROPERTIES
        INTERFACE_LINK_LIBRARIES ptx2llvm::ptx2llvm
        INTERFACE_INCLUDE_DIRECTORIES "${ptx2llvm_INCLUDE_DIR}")
endif()

include("${CMAKE_CURRENT_LIST_DIR}/ptx2llvmKernels.cmake")

set(ptx2llvm_FOUND TRUE)
if(NOT ptx2llvm_FIND_QUIETLY AND NOT _ptx2llvm_announced)
    set(_ptx2llvm_announced TRUE)
    message(STATUS "Found ptx2llvm ${ptx2llvm_VERSION}: ${PTX2LLVM_EXECUTABLE}")
endif()
cmake_policy(POP)
