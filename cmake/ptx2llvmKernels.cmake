# ptx2llvmKernels.cmake: ptx2llvm_add_kernels(), included by ptx2llvmConfig.cmake.
#
#   ptx2llvm_add_kernels(<target> SOURCES a.ptx [b.ptx ...]
#                        [ARCH sm_XX] [OPT_LEVEL 0|1|2|3] [HEADER_DIR dir])
#
# For every PTX file, at build time (re-run when the .ptx file or the ptx2llvm executable
# changes):
#   1. `ptx2llvm FILE.ptx --target cpu --emit obj -O<OPT_LEVEL> [--arch ARCH]` makes an object with
#      one C function per kernel, `void KERNEL(const void *params, ptx2llvm_thread *t)`;
#   2. the object's `ptx2llvm_static_shared_bytes` is renamed to a symbol of its own (objcopy
#      --redefine-sym), so that any number of PTX files link into one program;
#   3. `ptx2llvm kernels FILE.ptx --header FILE.ptx.h --shared-symbol ...` writes FILE.ptx.h with a
#      typed launch function per kernel:
#          int KERNEL_launch(ptx2llvm_dim3 grid, ptx2llvm_dim3 block, size_t shared_bytes, ...);
#      (0 on success; -1 after printing the error) and KERNEL_launch_err(char **err, grid, ...).
#      Parameters: .u64 (pointers, as compilers emit them) and .ptr parameters are `void *`,
#      .u32 `uint32_t`, .s32 `int32_t`, .f32 `float`, .f64 `double`, .f16/.bf16 `uint16_t` bits,
#      arrays and vectors `const void *` to their bytes.
# The objects are added to <target>, which links ptx2llvm::runtime, and the folder of the headers
# (${CMAKE_CURRENT_BINARY_DIR}/ptx2llvm_kernels/<target> unless HEADER_DIR says otherwise) is an
# include directory of <target>: `#include "FILE.ptx.h"`.
#
# ARCH is passed as --arch (the cpu target accepts it; PTX's own .target decides otherwise),
# OPT_LEVEL defaults to 2.

if(COMMAND ptx2llvm_add_kernels)
    return()
endif()

function(ptx2llvm_add_kernels target)
    cmake_parse_arguments(PARSE_ARGV 1 ARG "" "ARCH;OPT_LEVEL;HEADER_DIR" "SOURCES")
    if(ARG_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "ptx2llvm_add_kernels(${target}): unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
    endif()
    if(NOT TARGET ${target})
        message(FATAL_ERROR "ptx2llvm_add_kernels: `${target}` is not a target (add_executable or add_library first)")
    endif()
    if(NOT ARG_SOURCES)
        message(FATAL_ERROR "ptx2llvm_add_kernels(${target}): no SOURCES given")
    endif()
    if(NOT DEFINED ARG_OPT_LEVEL OR ARG_OPT_LEVEL STREQUAL "")
        set(ARG_OPT_LEVEL 2)
    endif()
    if(NOT ARG_OPT_LEVEL MATCHES "^[0-3]$")
        message(FATAL_ERROR "ptx2llvm_add_kernels(${target}): OPT_LEVEL must be 0, 1, 2 or 3, not `${ARG_OPT_LEVEL}`")
    endif()
    set(arch_args "")
    if(ARG_ARCH)
        if(NOT ARG_ARCH MATCHES "^sm_[0-9]+[af]?$")
            message(FATAL_ERROR "ptx2llvm_add_kernels(${target}): ARCH must look like sm_80, not `${ARG_ARCH}`")
        endif()
        set(arch_args --arch ${ARG_ARCH})
    endif()
    if(ARG_HEADER_DIR)
        get_filename_component(outdir "${ARG_HEADER_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
    else()
        set(outdir "${CMAKE_CURRENT_BINARY_DIR}/ptx2llvm_kernels/${target}")
    endif()
    file(MAKE_DIRECTORY "${outdir}")

    # objcopy renames the shared-size symbol; without one, a program may hold one PTX file only.
    set(objcopy "${PTX2LLVM_OBJCOPY}")
    if(NOT objcopy)
        if(CMAKE_OBJCOPY)
            set(objcopy "${CMAKE_OBJCOPY}")
        else()
            find_program(PTX2LLVM_OBJCOPY NAMES objcopy llvm-objcopy-22 llvm-objcopy
                         HINTS "$ENV{LLVM_SYS_221_PREFIX}/bin" /usr/lib/llvm-22/bin)
            set(objcopy "${PTX2LLVM_OBJCOPY}")
        endif()
    endif()

    get_target_property(exe ptx2llvm::compiler IMPORTED_LOCATION)
    set(exe_deps "${exe}")
    if(TARGET ptx2llvm_cargo)
        # ptx2llvm is built in this project (add_subdirectory of its cmake/ folder).
        list(APPEND exe_deps ptx2llvm_cargo)
        add_dependencies(${target} ptx2llvm_cargo)
    endif()

    string(MAKE_C_IDENTIFIER "${target}" target_id)
    set(objects "")
    set(headers "")
    get_property(seen TARGET ${target} PROPERTY PTX2LLVM_KERNEL_STEMS)
    foreach(src IN LISTS ARG_SOURCES)
        get_filename_component(src "${src}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
        get_filename_component(stem "${src}" NAME_WE)
        get_filename_component(name "${src}" NAME)
        if(stem IN_LIST seen)
            message(FATAL_ERROR "ptx2llvm_add_kernels(${target}): two PTX files are named ${stem}.*; "
                                "rename one or give it another HEADER_DIR through a second target")
        endif()
        list(APPEND seen "${stem}")
        string(MAKE_C_IDENTIFIER "${stem}" stem_id)
        if(WIN32)
            set(obj "${outdir}/${stem}.obj")
        else()
            set(obj "${outdir}/${stem}.o")
        endif()
        set(header "${outdir}/${name}.h")
        if(objcopy)
            set(symbol "ptx2llvm_static_shared_bytes_${target_id}_${stem_id}")
            set(rename_cmd COMMAND "${objcopy}"
                --redefine-sym "ptx2llvm_static_shared_bytes=${symbol}" "${obj}")
        else()
            set(symbol "ptx2llvm_static_shared_bytes")
            set(rename_cmd "")
            list(LENGTH ARG_SOURCES n_sources)
            if(n_sources GREATER 1)
                message(WARNING "ptx2llvm_add_kernels(${target}): no objcopy found (set PTX2LLVM_OBJCOPY): "
                                "the objects of several PTX files will clash at link time")
            endif()
        endif()
        file(RELATIVE_PATH rel "${CMAKE_BINARY_DIR}" "${obj}")
        add_custom_command(
            OUTPUT "${obj}" "${header}"
            COMMAND ptx2llvm::compiler "${src}" --target cpu --emit obj -O${ARG_OPT_LEVEL} ${arch_args}
                    -o "${obj}"
            ${rename_cmd}
            COMMAND ptx2llvm::compiler kernels "${src}" --header "${header}" --shared-symbol "${symbol}"
            DEPENDS "${src}" ${exe_deps}
            COMMENT "ptx2llvm: compiling ${name} for the cpu (${rel})"
            VERBATIM)
        set_source_files_properties("${obj}" PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
        set_source_files_properties("${header}" PROPERTIES GENERATED TRUE HEADER_FILE_ONLY TRUE)
        list(APPEND objects "${obj}")
        list(APPEND headers "${header}")
    endforeach()
    set_property(TARGET ${target} PROPERTY PTX2LLVM_KERNEL_STEMS "${seen}")

    target_sources(${target} PRIVATE ${objects} ${headers})
    target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${outdir}>")
    target_link_libraries(${target} PUBLIC ptx2llvm::runtime)
endfunction()
