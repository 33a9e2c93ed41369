//! Enums of NVIDIA's public `cuda.h` (CUDA 13.x) with the header's exact values, written by
//! `cuda/gen/types.py` (do not edit by hand). Names that alias an earlier value keep the
//! first spelling; `from_raw` maps a C value to the enum (unknown values: `None`).

#![allow(clippy::enum_variant_names, clippy::upper_case_acronyms)]

/// `cudaError`.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CUresult {
    /// `CUDA_SUCCESS`
    Success = 0,
    /// `CUDA_ERROR_INVALID_VALUE`
    ErrorInvalidValue = 1,
    /// `CUDA_ERROR_OUT_OF_MEMORY`
    ErrorOutOfMemory = 2,
    /// `CUDA_ERROR_NOT_INITIALIZED`
    ErrorNotInitialized = 3,
    /// `CUDA_ERROR_DEINITIALIZED`
    ErrorDeinitialized = 4,
    /// `CUDA_ERROR_PROFILER_DISABLED`
    ErrorProfilerDisabled = 5,
    /// `CUDA_ERROR_PROFILER_NOT_INITIALIZED`
    ErrorProfilerNotInitialized = 6,
    /// `CUDA_ERROR_PROFILER_ALREADY_STARTED`
    ErrorProfilerAlreadyStarted = 7,
    /// `CUDA_ERROR_PROFILER_ALREADY_STOPPED`
    ErrorProfilerAlreadyStopped = 8,
    /// `CUDA_ERROR_STUB_LIBRARY`
    ErrorStubLibrary = 34,
    /// `CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER`
    ErrorCallRequiresNewerDriver = 36,
    /// `CUDA_ERROR_DEVICE_UNAVAILABLE`
    ErrorDeviceUnavailable = 46,
    /// `CUDA_ERROR_MULTICAST_RESOURCE_FULL`
    ErrorMulticastResourceFull = 47,
    /// `CUDA_ERROR_NO_DEVICE`
    ErrorNoDevice = 100,
    /// `CUDA_ERROR_INVALID_DEVICE`
    ErrorInvalidDevice = 101,
    /// `CUDA_ERROR_DEVICE_NOT_LICENSED`
    ErrorDeviceNotLicensed = 102,
    /// `CUDA_ERROR_INVALID_IMAGE`
    ErrorInvalidImage = 200,
    /// `CUDA_ERROR_INVALID_CONTEXT`
    ErrorInvalidContext = 201,
    /// `CUDA_ERROR_CONTEXT_ALREADY_CURRENT`
    ErrorContextAlreadyCurrent = 202,
    /// `CUDA_ERROR_MAP_FAILED`
    ErrorMapFailed = 205,
    /// `CUDA_ERROR_UNMAP_FAILED`
    ErrorUnmapFailed = 206,
    /// `CUDA_ERROR_ARRAY_IS_MAPPED`
    ErrorArrayIsMapped = 207,
    /// `CUDA_ERROR_ALREADY_MAPPED`
    ErrorAlreadyMapped = 208,
    /// `CUDA_ERROR_NO_BINARY_FOR_GPU`
    ErrorNoBinaryForGpu = 209,
    /// `CUDA_ERROR_ALREADY_ACQUIRED`
    ErrorAlreadyAcquired = 210,
    /// `CUDA_ERROR_NOT_MAPPED`
    ErrorNotMapped = 211,
    /// `CUDA_ERROR_NOT_MAPPED_AS_ARRAY`
    ErrorNotMappedAsArray = 212,
    /// `CUDA_ERROR_NOT_MAPPED_AS_POINTER`
    ErrorNotMappedAsPointer = 213,
    /// `CUDA_ERROR_ECC_UNCORRECTABLE`
    ErrorEccUncorrectable = 214,
    /// `CUDA_ERROR_UNSUPPORTED_LIMIT`
    ErrorUnsupportedLimit = 215,
    /// `CUDA_ERROR_CONTEXT_ALREADY_IN_USE`
    ErrorContextAlreadyInUse = 216,
    /// `CUDA_ERROR_PEER_ACCESS_UNSUPPORTED`
    ErrorPeerAccessUnsupported = 217,
    /// `CUDA_ERROR_INVALID_PTX`
    ErrorInvalidPtx = 218,
    /// `CUDA_ERROR_INVALID_GRAPHICS_CONTEXT`
    ErrorInvalidGraphicsContext = 219,
    /// `CUDA_ERROR_NVLINK_UNCORRECTABLE`
    ErrorNvlinkUncorrectable = 220,
    /// `CUDA_ERROR_JIT_COMPILER_NOT_FOUND`
    ErrorJitCompilerNotFound = 221,
    /// `CUDA_ERROR_UNSUPPORTED_PTX_VERSION`
    ErrorUnsupportedPtxVersion = 222,
    /// `CUDA_ERROR_JIT_COMPILATION_DISABLED`
    ErrorJitCompilationDisabled = 223,
    /// `CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY`
    ErrorUnsupportedExecAffinity = 224,
    /// `CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC`
    ErrorUnsupportedDevsideSync = 225,
    /// `CUDA_ERROR_CONTAINED`
    ErrorContained = 226,
    /// `CUDA_ERROR_INSUFFICIENT_LOADER_VERSION`
    ErrorInsufficientLoaderVersion = 227,
    /// `CUDA_ERROR_INVALID_SOURCE`
    ErrorInvalidSource = 300,
    /// `CUDA_ERROR_FILE_NOT_FOUND`
    ErrorFileNotFound = 301,
    /// `CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND`
    ErrorSharedObjectSymbolNotFound = 302,
    /// `CUDA_ERROR_SHARED_OBJECT_INIT_FAILED`
    ErrorSharedObjectInitFailed = 303,
    /// `CUDA_ERROR_OPERATING_SYSTEM`
    ErrorOperatingSystem = 304,
    /// `CUDA_ERROR_INVALID_HANDLE`
    ErrorInvalidHandle = 400,
    /// `CUDA_ERROR_ILLEGAL_STATE`
    ErrorIllegalState = 401,
    /// `CUDA_ERROR_LOSSY_QUERY`
    ErrorLossyQuery = 402,
    /// `CUDA_ERROR_NOT_FOUND`
    ErrorNotFound = 500,
    /// `CUDA_ERROR_NOT_READY`
    ErrorNotReady = 600,
    /// `CUDA_ERROR_ILLEGAL_ADDRESS`
    ErrorIllegalAddress = 700,
    /// `CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES`
    ErrorLaunchOutOfResources = 701,
    /// `CUDA_ERROR_LAUNCH_TIMEOUT`
    ErrorLaunchTimeout = 702,
    /// `CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING`
    ErrorLaunchIncompatibleTexturing = 703,
    /// `CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED`
    ErrorPeerAccessAlreadyEnabled = 704,
    /// `CUDA_ERROR_PEER_ACCESS_NOT_ENABLED`
    ErrorPeerAccessNotEnabled = 705,
    /// `CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE`
    ErrorPrimaryContextActive = 708,
    /// `CUDA_ERROR_CONTEXT_IS_DESTROYED`
    ErrorContextIsDestroyed = 709,
    /// `CUDA_ERROR_ASSERT`
    ErrorAssert = 710,
    /// `CUDA_ERROR_TOO_MANY_PEERS`
    ErrorTooManyPeers = 711,
    /// `CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED`
    ErrorHostMemoryAlreadyRegistered = 712,
    /// `CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED`
    ErrorHostMemoryNotRegistered = 713,
    /// `CUDA_ERROR_HARDWARE_STACK_ERROR`
    ErrorHardwareStackError = 714,
    /// `CUDA_ERROR_ILLEGAL_INSTRUCTION`
    ErrorIllegalInstruction = 715,
    /// `CUDA_ERROR_MISALIGNED_ADDRESS`
    ErrorMisalignedAddress = 716,
    /// `CUDA_ERROR_INVALID_ADDRESS_SPACE`
    ErrorInvalidAddressSpace = 717,
    /// `CUDA_ERROR_INVALID_PC`
    ErrorInvalidPc = 718,
    /// `CUDA_ERROR_LAUNCH_FAILED`
    ErrorLaunchFailed = 719,
    /// `CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE`
    ErrorCooperativeLaunchTooLarge = 720,
    /// `CUDA_ERROR_TENSOR_MEMORY_LEAK`
    ErrorTensorMemoryLeak = 721,
    /// `CUDA_ERROR_NOT_PERMITTED`
    ErrorNotPermitted = 800,
    /// `CUDA_ERROR_NOT_SUPPORTED`
    ErrorNotSupported = 801,
    /// `CUDA_ERROR_SYSTEM_NOT_READY`
    ErrorSystemNotReady = 802,
    /// `CUDA_ERROR_SYSTEM_DRIVER_MISMATCH`
    ErrorSystemDriverMismatch = 803,
    /// `CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE`
    ErrorCompatNotSupportedOnDevice = 804,
    /// `CUDA_ERROR_MPS_CONNECTION_FAILED`
    ErrorMpsConnectionFailed = 805,
    /// `CUDA_ERROR_MPS_RPC_FAILURE`
    ErrorMpsRpcFailure = 806,
    /// `CUDA_ERROR_MPS_SERVER_NOT_READY`
    ErrorMpsServerNotReady = 807,
    /// `CUDA_ERROR_MPS_MAX_CLIENTS_REACHED`
    ErrorMpsMaxClientsReached = 808,
    /// `CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED`
    ErrorMpsMaxConnectionsReached = 809,
    /// `CUDA_ERROR_MPS_CLIENT_TERMINATED`
    ErrorMpsClientTerminated = 810,
    /// `CUDA_ERROR_CDP_NOT_SUPPORTED`
    ErrorCdpNotSupported = 811,
    /// `CUDA_ERROR_CDP_VERSION_MISMATCH`
    ErrorCdpVersionMismatch = 812,
    /// `CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`
    ErrorStreamCaptureUnsupported = 900,
    /// `CUDA_ERROR_STREAM_CAPTURE_INVALIDATED`
    ErrorStreamCaptureInvalidated = 901,
    /// `CUDA_ERROR_STREAM_CAPTURE_MERGE`
    ErrorStreamCaptureMerge = 902,
    /// `CUDA_ERROR_STREAM_CAPTURE_UNMATCHED`
    ErrorStreamCaptureUnmatched = 903,
    /// `CUDA_ERROR_STREAM_CAPTURE_UNJOINED`
    ErrorStreamCaptureUnjoined = 904,
    /// `CUDA_ERROR_STREAM_CAPTURE_ISOLATION`
    ErrorStreamCaptureIsolation = 905,
    /// `CUDA_ERROR_STREAM_CAPTURE_IMPLICIT`
    ErrorStreamCaptureImplicit = 906,
    /// `CUDA_ERROR_CAPTURED_EVENT`
    ErrorCapturedEvent = 907,
    /// `CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD`
    ErrorStreamCaptureWrongThread = 908,
    /// `CUDA_ERROR_TIMEOUT`
    ErrorTimeout = 909,
    /// `CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE`
    ErrorGraphExecUpdateFailure = 910,
    /// `CUDA_ERROR_EXTERNAL_DEVICE`
    ErrorExternalDevice = 911,
    /// `CUDA_ERROR_INVALID_CLUSTER_SIZE`
    ErrorInvalidClusterSize = 912,
    /// `CUDA_ERROR_FUNCTION_NOT_LOADED`
    ErrorFunctionNotLoaded = 913,
    /// `CUDA_ERROR_INVALID_RESOURCE_TYPE`
    ErrorInvalidResourceType = 914,
    /// `CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION`
    ErrorInvalidResourceConfiguration = 915,
    /// `CUDA_ERROR_KEY_ROTATION`
    ErrorKeyRotation = 916,
    /// `CUDA_ERROR_STREAM_DETACHED`
    ErrorStreamDetached = 917,
    /// `CUDA_ERROR_GRAPH_RECAPTURE_FAILURE`
    ErrorGraphRecaptureFailure = 918,
    /// `CUDA_ERROR_FABRIC_NOT_READY`
    ErrorFabricNotReady = 919,
    /// `CUDA_ERROR_UNKNOWN`
    ErrorUnknown = 999,
}

impl CUresult {
    pub fn from_raw(v: i32) -> Option<Self> {
        Some(match v {
            0 => Self::Success,
            1 => Self::ErrorInvalidValue,
            2 => Self::ErrorOutOfMemory,
            3 => Self::ErrorNotInitialized,
            4 => Self::ErrorDeinitialized,
            5 => Self::ErrorProfilerDisabled,
            6 => Self::ErrorProfilerNotInitialized,
            7 => Self::ErrorProfilerAlreadyStarted,
            8 => Self::ErrorProfilerAlreadyStopped,
            34 => Self::ErrorStubLibrary,
            36 => Self::ErrorCallRequiresNewerDriver,
            46 => Self::ErrorDeviceUnavailable,
            47 => Self::ErrorMulticastResourceFull,
            100 => Self::ErrorNoDevice,
            101 => Self::ErrorInvalidDevice,
            102 => Self::ErrorDeviceNotLicensed,
            200 => Self::ErrorInvalidImage,
            201 => Self::ErrorInvalidContext,
            202 => Self::ErrorContextAlreadyCurrent,
            205 => Self::ErrorMapFailed,
            206 => Self::ErrorUnmapFailed,
            207 => Self::ErrorArrayIsMapped,
            208 => Self::ErrorAlreadyMapped,
            209 => Self::ErrorNoBinaryForGpu,
            210 => Self::ErrorAlreadyAcquired,
            211 => Self::ErrorNotMapped,
            212 => Self::ErrorNotMappedAsArray,
            213 => Self::ErrorNotMappedAsPointer,
            214 => Self::ErrorEccUncorrectable,
            215 => Self::ErrorUnsupportedLimit,
            216 => Self::ErrorContextAlreadyInUse,
            217 => Self::ErrorPeerAccessUnsupported,
            218 => Self::ErrorInvalidPtx,
            219 => Self::ErrorInvalidGraphicsContext,
            220 => Self::ErrorNvlinkUncorrectable,
            221 => Self::ErrorJitCompilerNotFound,
            222 => Self::ErrorUnsupportedPtxVersion,
            223 => Self::ErrorJitCompilationDisabled,
            224 => Self::ErrorUnsupportedExecAffinity,
            225 => Self::ErrorUnsupportedDevsideSync,
            226 => Self::ErrorContained,
            227 => Self::ErrorInsufficientLoaderVersion,
            300 => Self::ErrorInvalidSource,
            301 => Self::ErrorFileNotFound,
            302 => Self::ErrorSharedObjectSymbolNotFound,
            303 => Self::ErrorSharedObjectInitFailed,
            304 => Self::ErrorOperatingSystem,
            400 => Self::ErrorInvalidHandle,
            401 => Self::ErrorIllegalState,
            402 => Self::ErrorLossyQuery,
            500 => Self::ErrorNotFound,
            600 => Self::ErrorNotReady,
            700 => Self::ErrorIllegalAddress,
            701 => Self::ErrorLaunchOutOfResources,
            702 => Self::ErrorLaunchTimeout,
            703 => Self::ErrorLaunchIncompatibleTexturing,
            704 => Self::ErrorPeerAccessAlreadyEnabled,
            705 => Self::ErrorPeerAccessNotEnabled,
            708 => Self::ErrorPrimaryContextActive,
            709 => Self::ErrorContextIsDestroyed,
            710 => Self::ErrorAssert,
            711 => Self::ErrorTooManyPeers,
            712 => Self::ErrorHostMemoryAlreadyRegistered,
            713 => Self::ErrorHostMemoryNotRegistered,
            714 => Self::ErrorHardwareStackError,
            715 => Self::ErrorIllegalInstruction,
            716 => Self::ErrorMisalignedAddress,
            717 => Self::ErrorInvalidAddressSpace,
            718 => Self::ErrorInvalidPc,
            719 => Self::ErrorLaunchFailed,
            720 => Self::ErrorCooperativeLaunchTooLarge,
            721 => Self::ErrorTensorMemoryLeak,
            800 => Self::ErrorNotPermitted,
            801 => Self::ErrorNotSupported,
            802 => Self::ErrorSystemNotReady,
            803 => Self::ErrorSystemDriverMismatch,
            804 => Self::ErrorCompatNotSupportedOnDevice,
            805 => Self::ErrorMpsConnectionFailed,
            806 => Self::ErrorMpsRpcFailure,
            807 => Self::ErrorMpsServerNotReady,
            808 => Self::ErrorMpsMaxClientsReached,
            809 => Self::ErrorMpsMaxConnectionsReached,
            810 => Self::ErrorMpsClientTerminated,
            811 => Self::ErrorCdpNotSupported,
            812 => Self::ErrorCdpVersionMismatch,
            900 => Self::ErrorStreamCaptureUnsupported,
            901 => Self::ErrorStreamCaptureInvalidated,
            902 => Self::ErrorStreamCaptureMerge,
            903 => Self::ErrorStreamCaptureUnmatched,
            904 => Self::ErrorStreamCaptureUnjoined,
            905 => Self::ErrorStreamCaptureIsolation,
            906 => Self::ErrorStreamCaptureImplicit,
            907 => Self::ErrorCapturedEvent,
            908 => Self::ErrorStreamCaptureWrongThread,
            909 => Self::ErrorTimeout,
            910 => Self::ErrorGraphExecUpdateFailure,
            911 => Self::ErrorExternalDevice,
            912 => Self::ErrorInvalidClusterSize,
            913 => Self::ErrorFunctionNotLoaded,
            914 => Self::ErrorInvalidResourceType,
            915 => Self::ErrorInvalidResourceConfiguration,
            916 => Self::ErrorKeyRotation,
            917 => Self::ErrorStreamDetached,
            918 => Self::ErrorGraphRecaptureFailure,
            919 => Self::ErrorFabricNotReady,
            999 => Self::ErrorUnknown,
            _ => return None,
        })
    }

    /// The C name (`CUDA_ERROR_INVALID_VALUE`), NUL-terminated.
    pub fn name(self) -> &'static str {
        match self {
            Self::Success => "CUDA_SUCCESS\0",
            Self::ErrorInvalidValue => "CUDA_ERROR_INVALID_VALUE\0",
            Self::ErrorOutOfMemory => "CUDA_ERROR_OUT_OF_MEMORY\0",
            Self::ErrorNotInitialized => "CUDA_ERROR_NOT_INITIALIZED\0",
            Self::ErrorDeinitialized => "CUDA_ERROR_DEINITIALIZED\0",
            Self::ErrorProfilerDisabled => "CUDA_ERROR_PROFILER_DISABLED\0",
            Self::ErrorProfilerNotInitialized => "CUDA_ERROR_PROFILER_NOT_INITIALIZED\0",
            Self::ErrorProfilerAlreadyStarted => "CUDA_ERROR_PROFILER_ALREADY_STARTED\0",
            Self::ErrorProfilerAlreadyStopped => "CUDA_ERROR_PROFILER_ALREADY_STOPPED\0",
            Self::ErrorStubLibrary => "CUDA_ERROR_STUB_LIBRARY\0",
            Self::ErrorCallRequiresNewerDriver => "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER\0",
            Self::ErrorDeviceUnavailable => "CUDA_ERROR_DEVICE_UNAVAILABLE\0",
            Self::ErrorMulticastResourceFull => "CUDA_ERROR_MULTICAST_RESOURCE_FULL\0",
            Self::ErrorNoDevice => "CUDA_ERROR_NO_DEVICE\0",
            Self::ErrorInvalidDevice => "CUDA_ERROR_INVALID_DEVICE\0",
            Self::ErrorDeviceNotLicensed => "CUDA_ERROR_DEVICE_NOT_LICENSED\0",
            Self::ErrorInvalidImage => "CUDA_ERROR_INVALID_IMAGE\0",
            Self::ErrorInvalidContext => "CUDA_ERROR_INVALID_CONTEXT\0",
            Self::ErrorContextAlreadyCurrent => "CUDA_ERROR_CONTEXT_ALREADY_CURRENT\0",
            Self::ErrorMapFailed => "CUDA_ERROR_MAP_FAILED\0",
            Self::ErrorUnmapFailed => "CUDA_ERROR_UNMAP_FAILED\0",
            Self::ErrorArrayIsMapped => "CUDA_ERROR_ARRAY_IS_MAPPED\0",
            Self::ErrorAlreadyMapped => "CUDA_ERROR_ALREADY_MAPPED\0",
            Self::ErrorNoBinaryForGpu => "CUDA_ERROR_NO_BINARY_FOR_GPU\0",
            Self::ErrorAlreadyAcquired => "CUDA_ERROR_ALREADY_ACQUIRED\0",
            Self::ErrorNotMapped => "CUDA_ERROR_NOT_MAPPED\0",
            Self::ErrorNotMappedAsArray => "CUDA_ERROR_NOT_MAPPED_AS_ARRAY\0",
            Self::ErrorNotMappedAsPointer => "CUDA_ERROR_NOT_MAPPED_AS_POINTER\0",
            Self::ErrorEccUncorrectable => "CUDA_ERROR_ECC_UNCORRECTABLE\0",
            Self::ErrorUnsupportedLimit => "CUDA_ERROR_UNSUPPORTED_LIMIT\0",
            Self::ErrorContextAlreadyInUse => "CUDA_ERROR_CONTEXT_ALREADY_IN_USE\0",
            Self::ErrorPeerAccessUnsupported => "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED\0",
            Self::ErrorInvalidPtx => "CUDA_ERROR_INVALID_PTX\0",
            Self::ErrorInvalidGraphicsContext => "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT\0",
            Self::ErrorNvlinkUncorrectable => "CUDA_ERROR_NVLINK_UNCORRECTABLE\0",
            Self::ErrorJitCompilerNotFound => "CUDA_ERROR_JIT_COMPILER_NOT_FOUND\0",
            Self::ErrorUnsupportedPtxVersion => "CUDA_ERROR_UNSUPPORTED_PTX_VERSION\0",
            Self::ErrorJitCompilationDisabled => "CUDA_ERROR_JIT_COMPILATION_DISABLED\0",
            Self::ErrorUnsupportedExecAffinity => "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY\0",
            Self::ErrorUnsupportedDevsideSync => "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC\0",
            Self::ErrorContained => "CUDA_ERROR_CONTAINED\0",
            Self::ErrorInsufficientLoaderVersion => "CUDA_ERROR_INSUFFICIENT_LOADER_VERSION\0",
            Self::ErrorInvalidSource => "CUDA_ERROR_INVALID_SOURCE\0",
            Self::ErrorFileNotFound => "CUDA_ERROR_FILE_NOT_FOUND\0",
            Self::ErrorSharedObjectSymbolNotFound => "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND\0",
            Self::ErrorSharedObjectInitFailed => "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED\0",
            Self::ErrorOperatingSystem => "CUDA_ERROR_OPERATING_SYSTEM\0",
            Self::ErrorInvalidHandle => "CUDA_ERROR_INVALID_HANDLE\0",
            Self::ErrorIllegalState => "CUDA_ERROR_ILLEGAL_STATE\0",
            Self::ErrorLossyQuery => "CUDA_ERROR_LOSSY_QUERY\0",
            Self::ErrorNotFound => "CUDA_ERROR_NOT_FOUND\0",
            Self::ErrorNotReady => "CUDA_ERROR_NOT_READY\0",
            Self::ErrorIllegalAddress => "CUDA_ERROR_ILLEGAL_ADDRESS\0",
            Self::ErrorLaunchOutOfResources => "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES\0",
            Self::ErrorLaunchTimeout => "CUDA_ERROR_LAUNCH_TIMEOUT\0",
            Self::ErrorLaunchIncompatibleTexturing => "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING\0",
            Self::ErrorPeerAccessAlreadyEnabled => "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED\0",
            Self::ErrorPeerAccessNotEnabled => "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED\0",
            Self::ErrorPrimaryContextActive => "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE\0",
            Self::ErrorContextIsDestroyed => "CUDA_ERROR_CONTEXT_IS_DESTROYED\0",
            Self::ErrorAssert => "CUDA_ERROR_ASSERT\0",
            Self::ErrorTooManyPeers => "CUDA_ERROR_TOO_MANY_PEERS\0",
            Self::ErrorHostMemoryAlreadyRegistered => "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED\0",
            Self::ErrorHostMemoryNotRegistered => "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED\0",
            Self::ErrorHardwareStackError => "CUDA_ERROR_HARDWARE_STACK_ERROR\0",
            Self::ErrorIllegalInstruction => "CUDA_ERROR_ILLEGAL_INSTRUCTION\0",
            Self::ErrorMisalignedAddress => "CUDA_ERROR_MISALIGNED_ADDRESS\0",
            Self::ErrorInvalidAddressSpace => "CUDA_ERROR_INVALID_ADDRESS_SPACE\0",
            Self::ErrorInvalidPc => "CUDA_ERROR_INVALID_PC\0",
            Self::ErrorLaunchFailed => "CUDA_ERROR_LAUNCH_FAILED\0",
            Self::ErrorCooperativeLaunchTooLarge => "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE\0",
            Self::ErrorTensorMemoryLeak => "CUDA_ERROR_TENSOR_MEMORY_LEAK\0",
            Self::ErrorNotPermitted => "CUDA_ERROR_NOT_PERMITTED\0",
            Self::ErrorNotSupported => "CUDA_ERROR_NOT_SUPPORTED\0",
            Self::ErrorSystemNotReady => "CUDA_ERROR_SYSTEM_NOT_READY\0",
            Self::ErrorSystemDriverMismatch => "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH\0",
            Self::ErrorCompatNotSupportedOnDevice => "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE\0",
            Self::ErrorMpsConnectionFailed => "CUDA_ERROR_MPS_CONNECTION_FAILED\0",
            Self::ErrorMpsRpcFailure => "CUDA_ERROR_MPS_RPC_FAILURE\0",
            Self::ErrorMpsServerNotReady => "CUDA_ERROR_MPS_SERVER_NOT_READY\0",
            Self::ErrorMpsMaxClientsReached => "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED\0",
            Self::ErrorMpsMaxConnectionsReached => "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED\0",
            Self::ErrorMpsClientTerminated => "CUDA_ERROR_MPS_CLIENT_TERMINATED\0",
            Self::ErrorCdpNotSupported => "CUDA_ERROR_CDP_NOT_SUPPORTED\0",
            Self::ErrorCdpVersionMismatch => "CUDA_ERROR_CDP_VERSION_MISMATCH\0",
            Self::ErrorStreamCaptureUnsupported => "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED\0",
            Self::ErrorStreamCaptureInvalidated => "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED\0",
            Self::ErrorStreamCaptureMerge => "CUDA_ERROR_STREAM_CAPTURE_MERGE\0",
            Self::ErrorStreamCaptureUnmatched => "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED\0",
            Self::ErrorStreamCaptureUnjoined => "CUDA_ERROR_STREAM_CAPTURE_UNJOINED\0",
            Self::ErrorStreamCaptureIsolation => "CUDA_ERROR_STREAM_CAPTURE_ISOLATION\0",
            Self::ErrorStreamCaptureImplicit => "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT\0",
            Self::ErrorCapturedEvent => "CUDA_ERROR_CAPTURED_EVENT\0",
            Self::ErrorStreamCaptureWrongThread => "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD\0",
            Self::ErrorTimeout => "CUDA_ERROR_TIMEOUT\0",
            Self::ErrorGraphExecUpdateFailure => "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE\0",
            Self::ErrorExternalDevice => "CUDA_ERROR_EXTERNAL_DEVICE\0",
            Self::ErrorInvalidClusterSize => "CUDA_ERROR_INVALID_CLUSTER_SIZE\0",
            Self::ErrorFunctionNotLoaded => "CUDA_ERROR_FUNCTION_NOT_LOADED\0",
            Self::ErrorInvalidResourceType => "CUDA_ERROR_INVALID_RESOURCE_TYPE\0",
            Self::ErrorInvalidResourceConfiguration => {
                "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION\0"
            }
            Self::ErrorKeyRotation => "CUDA_ERROR_KEY_ROTATION\0",
            Self::ErrorStreamDetached => "CUDA_ERROR_STREAM_DETACHED\0",
            Self::ErrorGraphRecaptureFailure => "CUDA_ERROR_GRAPH_RECAPTURE_FAILURE\0",
            Self::ErrorFabricNotReady => "CUDA_ERROR_FABRIC_NOT_READY\0",
            Self::ErrorUnknown => "CUDA_ERROR_UNKNOWN\0",
        }
    }

    /// The header's description (first sentence), NUL-terminated.
    pub fn description(self) -> &'static str {
        match self {
            Self::Success => "The API call returned with no errors.\0",
            Self::ErrorInvalidValue => "This indicates that one or more of the parameters passed to the API call is not within an acceptable range of values.\0",
            Self::ErrorOutOfMemory => "The API call failed because it was unable to allocate enough memory or other resources to perform the requested operation.\0",
            Self::ErrorNotInitialized => "This indicates that the CUDA driver has not been initialized with cuInit() or that initialization has failed.\0",
            Self::ErrorDeinitialized => "This indicates that the CUDA driver is in the process of shutting down.\0",
            Self::ErrorProfilerDisabled => "This indicates profiler is not initialized for this run.\0",
            Self::ErrorProfilerNotInitialized => "Deprecated: This error return is deprecated as of CUDA 5.0.\0",
            Self::ErrorProfilerAlreadyStarted => "Deprecated: This error return is deprecated as of CUDA 5.0.\0",
            Self::ErrorProfilerAlreadyStopped => "Deprecated: This error return is deprecated as of CUDA 5.0.\0",
            Self::ErrorStubLibrary => "This indicates that the CUDA driver that the application has loaded is a stub library.\0",
            Self::ErrorCallRequiresNewerDriver => "This indicates that the API call requires a newer CUDA driver than the one currently installed.\0",
            Self::ErrorDeviceUnavailable => "This indicates that requested CUDA device is unavailable at the current time.\0",
            Self::ErrorMulticastResourceFull => "The API call failed because of a hardware resource required to bind memory to a multicast object is unavailable.\0",
            Self::ErrorNoDevice => "This indicates that no CUDA-capable devices were detected by the installed CUDA driver.\0",
            Self::ErrorInvalidDevice => "This indicates that the device ordinal supplied by the user does not correspond to a valid CUDA device or that the action requested is invalid for the specified device.\0",
            Self::ErrorDeviceNotLicensed => "This error indicates that the Grid license is not applied.\0",
            Self::ErrorInvalidImage => "This indicates that the device kernel image is invalid.\0",
            Self::ErrorInvalidContext => "This most frequently indicates that there is no context bound to the current thread.\0",
            Self::ErrorContextAlreadyCurrent => "This indicated that the context being supplied as a parameter to the API call was already the active context.\0",
            Self::ErrorMapFailed => "This indicates that a map or register operation has failed.\0",
            Self::ErrorUnmapFailed => "This indicates that an unmap or unregister operation has failed.\0",
            Self::ErrorArrayIsMapped => "This indicates that the specified array is currently mapped and thus cannot be destroyed.\0",
            Self::ErrorAlreadyMapped => "This indicates that the resource is already mapped.\0",
            Self::ErrorNoBinaryForGpu => "This indicates that there is no kernel image available that is suitable for the device.\0",
            Self::ErrorAlreadyAcquired => "This indicates that a resource has already been acquired.\0",
            Self::ErrorNotMapped => "This indicates that a resource is not mapped.\0",
            Self::ErrorNotMappedAsArray => "This indicates that a mapped resource is not available for access as an array.\0",
            Self::ErrorNotMappedAsPointer => "This indicates that a mapped resource is not available for access as a pointer.\0",
            Self::ErrorEccUncorrectable => "This indicates that an uncorrectable ECC error was detected during execution.\0",
            Self::ErrorUnsupportedLimit => "This indicates that the CUlimit passed to the API call is not supported by the active device.\0",
            Self::ErrorContextAlreadyInUse => "This indicates that the CUcontext passed to the API call can only be bound to a single CPU thread at a time but is already bound to a CPU thread.\0",
            Self::ErrorPeerAccessUnsupported => "This indicates that peer access is not supported across the given devices.\0",
            Self::ErrorInvalidPtx => "This indicates that a PTX JIT compilation failed.\0",
            Self::ErrorInvalidGraphicsContext => "This indicates an error with OpenGL or DirectX context.\0",
            Self::ErrorNvlinkUncorrectable => "This indicates that an uncorrectable NVLink error was detected during the execution.\0",
            Self::ErrorJitCompilerNotFound => "This indicates that the PTX JIT compiler library was not found.\0",
            Self::ErrorUnsupportedPtxVersion => "This indicates that the provided PTX was compiled with an unsupported toolchain.\0",
            Self::ErrorJitCompilationDisabled => "This indicates that the PTX JIT compilation was disabled.\0",
            Self::ErrorUnsupportedExecAffinity => "This indicates that the CUexecAffinityType passed to the API call is not supported by the active device.\0",
            Self::ErrorUnsupportedDevsideSync => "This indicates that the code to be compiled by the PTX JIT contains unsupported call to cudaDeviceSynchronize.\0",
            Self::ErrorContained => "This indicates that an exception occurred on the device that is now contained by the GPU's error containment capability.\0",
            Self::ErrorInsufficientLoaderVersion => "This indicates that the Loader version is insufficient for fatbin\0",
            Self::ErrorInvalidSource => "This indicates that the device kernel source is invalid.\0",
            Self::ErrorFileNotFound => "This indicates that the file specified was not found.\0",
            Self::ErrorSharedObjectSymbolNotFound => "This indicates that a link to a shared object failed to resolve.\0",
            Self::ErrorSharedObjectInitFailed => "This indicates that initialization of a shared object failed.\0",
            Self::ErrorOperatingSystem => "This indicates that an OS call failed.\0",
            Self::ErrorInvalidHandle => "This indicates that a resource handle passed to the API call was not valid.\0",
            Self::ErrorIllegalState => "This indicates that a resource required by the API call is not in a valid state to perform the requested operation.\0",
            Self::ErrorLossyQuery => "This indicates an attempt was made to introspect an object in a way that would discard semantically important information.\0",
            Self::ErrorNotFound => "This indicates that a named symbol was not found.\0",
            Self::ErrorNotReady => "This indicates that asynchronous operations issued previously have not completed yet.\0",
            Self::ErrorIllegalAddress => "While executing a kernel, the device encountered a load or store instruction on an invalid memory address.\0",
            Self::ErrorLaunchOutOfResources => "This indicates that a launch did not occur because it did not have appropriate resources.\0",
            Self::ErrorLaunchTimeout => "This indicates that the device kernel took too long to execute.\0",
            Self::ErrorLaunchIncompatibleTexturing => "This error indicates a kernel launch that uses an incompatible texturing mode.\0",
            Self::ErrorPeerAccessAlreadyEnabled => "This error indicates that a call to cuCtxEnablePeerAccess() is trying to re-enable peer access to a context which has already had peer access to it enabled.\0",
            Self::ErrorPeerAccessNotEnabled => "This error indicates that cuCtxDisablePeerAccess() is trying to disable peer access which has not been enabled yet via cuCtxEnablePeerAccess().\0",
            Self::ErrorPrimaryContextActive => "This error indicates that the primary context for the specified device has already been initialized.\0",
            Self::ErrorContextIsDestroyed => "This error indicates that the context current to the calling thread has been destroyed using cuCtxDestroy, or is a primary context which has not yet been initialized.\0",
            Self::ErrorAssert => "A device-side assert triggered during kernel execution.\0",
            Self::ErrorTooManyPeers => "This error indicates that the hardware resources required to enable peer access have been exhausted for one or more of the devices passed to cuCtxEnablePeerAccess().\0",
            Self::ErrorHostMemoryAlreadyRegistered => "This error indicates that the memory range passed to cuMemHostRegister() has already been registered.\0",
            Self::ErrorHostMemoryNotRegistered => "This error indicates that the pointer passed to cuMemHostUnregister() does not correspond to any currently registered memory region.\0",
            Self::ErrorHardwareStackError => "While executing a kernel, the device encountered a stack error.\0",
            Self::ErrorIllegalInstruction => "While executing a kernel, the device encountered an illegal instruction.\0",
            Self::ErrorMisalignedAddress => "While executing a kernel, the device encountered a load or store instruction on a memory address which is not aligned.\0",
            Self::ErrorInvalidAddressSpace => "While executing a kernel, the device encountered an instruction which can only operate on memory locations in certain address spaces (global, shared, or local), but was supplied a memory address not belonging to an allowed address space.\0",
            Self::ErrorInvalidPc => "While executing a kernel, the device program counter wrapped its address space.\0",
            Self::ErrorLaunchFailed => "An exception occurred on the device while executing a kernel.\0",
            Self::ErrorCooperativeLaunchTooLarge => "This error indicates that the number of blocks launched per grid for a kernel that was launched via either cuLaunchCooperativeKernel or cuLaunchCooperativeKernelMultiDevice exceeds the maximum number of blocks as allowed by cuOccupancyMaxActiveBlocksPerMultiprocessor or cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags times the number of multiprocessors as specified by the device attribute CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT.\0",
            Self::ErrorTensorMemoryLeak => "An exception occurred on the device while exiting a kernel using tensor memory: the tensor memory was not completely deallocated.\0",
            Self::ErrorNotPermitted => "This error indicates that the attempted operation is not permitted.\0",
            Self::ErrorNotSupported => "This error indicates that the attempted operation is not supported on the current system or device.\0",
            Self::ErrorSystemNotReady => "This error indicates that the system is not yet ready to start any CUDA work.\0",
            Self::ErrorSystemDriverMismatch => "This error indicates that there is a mismatch between the versions of the display driver and the CUDA driver.\0",
            Self::ErrorCompatNotSupportedOnDevice => "This error indicates that the system was upgraded to run with forward compatibility but the visible hardware detected by CUDA does not support this configuration.\0",
            Self::ErrorMpsConnectionFailed => "This error indicates that the MPS client failed to connect to the MPS control daemon or the MPS server.\0",
            Self::ErrorMpsRpcFailure => "This error indicates that the remote procedural call between the MPS server and the MPS client failed.\0",
            Self::ErrorMpsServerNotReady => "This error indicates that the MPS server is not ready to accept new MPS client requests.\0",
            Self::ErrorMpsMaxClientsReached => "This error indicates that the hardware resources required to create MPS client have been exhausted.\0",
            Self::ErrorMpsMaxConnectionsReached => "This error indicates the the hardware resources required to support device connections have been exhausted.\0",
            Self::ErrorMpsClientTerminated => "This error indicates that the MPS client has been terminated by the server.\0",
            Self::ErrorCdpNotSupported => "This error indicates that the module is using CUDA Dynamic Parallelism, but the current configuration, like MPS, does not support it.\0",
            Self::ErrorCdpVersionMismatch => "This error indicates that a module contains an unsupported interaction between different versions of CUDA Dynamic Parallelism.\0",
            Self::ErrorStreamCaptureUnsupported => "This error indicates that the operation is not permitted when the stream is capturing.\0",
            Self::ErrorStreamCaptureInvalidated => "This error indicates that the current capture sequence on the stream has been invalidated due to a previous error.\0",
            Self::ErrorStreamCaptureMerge => "This error indicates that the operation would have resulted in a merge of two independent capture sequences.\0",
            Self::ErrorStreamCaptureUnmatched => "This error indicates that the capture was not initiated in this stream.\0",
            Self::ErrorStreamCaptureUnjoined => "This error indicates that the capture sequence contains a fork that was not joined to the primary stream.\0",
            Self::ErrorStreamCaptureIsolation => "This error indicates that a dependency would have been created which crosses the capture sequence boundary.\0",
            Self::ErrorStreamCaptureImplicit => "This error indicates a disallowed implicit dependency on a current capture sequence from cudaStreamLegacy.\0",
            Self::ErrorCapturedEvent => "This error indicates that the operation is not permitted on an event which was last recorded in a capturing stream.\0",
            Self::ErrorStreamCaptureWrongThread => "A stream capture sequence not initiated with the CU_STREAM_CAPTURE_MODE_RELAXED argument to cuStreamBeginCapture was passed to cuStreamEndCapture in a different thread.\0",
            Self::ErrorTimeout => "This error indicates that the timeout specified for the wait operation has lapsed.\0",
            Self::ErrorGraphExecUpdateFailure => "This error indicates that the graph update was not performed because it included changes which violated constraints specific to instantiated graph update.\0",
            Self::ErrorExternalDevice => "This indicates that an error has occurred in a device outside of GPU.\0",
            Self::ErrorInvalidClusterSize => "Indicates a kernel launch error due to cluster misconfiguration.\0",
            Self::ErrorFunctionNotLoaded => "Indiciates a function handle is not loaded when calling an API that requires a loaded function.\0",
            Self::ErrorInvalidResourceType => "This error indicates one or more resources passed in are not valid resource types for the operation.\0",
            Self::ErrorInvalidResourceConfiguration => "This error indicates one or more resources are insufficient or non-applicable for the operation.\0",
            Self::ErrorKeyRotation => "This error indicates that an error happened during the key rotation sequence.\0",
            Self::ErrorStreamDetached => "This error indicates that the requested operation is not permitted because the stream is in a detached state.\0",
            Self::ErrorGraphRecaptureFailure => "This error indicates that a graph recapture failed and had to be terminated.\0",
            Self::ErrorFabricNotReady => "The GPU fabric is not ready within the bounded wait while the fabric manager probe is still in progress (or not converging in time).\0",
            Self::ErrorUnknown => "This indicates that an unknown internal error has occurred.\0",
        }
    }
}

/// `CUdevice_attribute`.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceAttr {
    /// `CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK`
    MaxThreadsPerBlock = 1,
    /// `CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X`
    MaxBlockDimX = 2,
    /// `CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y`
    MaxBlockDimY = 3,
    /// `CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z`
    MaxBlockDimZ = 4,
    /// `CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X`
    MaxGridDimX = 5,
    /// `CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y`
    MaxGridDimY = 6,
    /// `CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z`
    MaxGridDimZ = 7,
    /// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK`
    MaxSharedMemoryPerBlock = 8,
    /// `CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY`
    TotalConstantMemory = 9,
    /// `CU_DEVICE_ATTRIBUTE_WARP_SIZE`
    WarpSize = 10,
    /// `CU_DEVICE_ATTRIBUTE_MAX_PITCH`
    MaxPitch = 11,
    /// `CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK`
    MaxRegistersPerBlock = 12,
    /// `CU_DEVICE_ATTRIBUTE_CLOCK_RATE`
    ClockRate = 13,
    /// `CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT`
    TextureAlignment = 14,
    /// `CU_DEVICE_ATTRIBUTE_GPU_OVERLAP`
    GpuOverlap = 15,
    /// `CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`
    MultiprocessorCount = 16,
    /// `CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT`
    KernelExecTimeout = 17,
    /// `CU_DEVICE_ATTRIBUTE_INTEGRATED`
    Integrated = 18,
    /// `CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY`
    CanMapHostMemory = 19,
    /// `CU_DEVICE_ATTRIBUTE_COMPUTE_MODE`
    ComputeMode = 20,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH`
    MaximumTexture1dWidth = 21,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH`
    MaximumTexture2dWidth = 22,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT`
    MaximumTexture2dHeight = 23,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH`
    MaximumTexture3dWidth = 24,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT`
    MaximumTexture3dHeight = 25,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH`
    MaximumTexture3dDepth = 26,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH`
    MaximumTexture2dLayeredWidth = 27,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT`
    MaximumTexture2dLayeredHeight = 28,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS`
    MaximumTexture2dLayeredLayers = 29,
    /// `CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT`
    SurfaceAlignment = 30,
    /// `CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS`
    ConcurrentKernels = 31,
    /// `CU_DEVICE_ATTRIBUTE_ECC_ENABLED`
    EccEnabled = 32,
    /// `CU_DEVICE_ATTRIBUTE_PCI_BUS_ID`
    PciBusId = 33,
    /// `CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID`
    PciDeviceId = 34,
    /// `CU_DEVICE_ATTRIBUTE_TCC_DRIVER`
    TccDriver = 35,
    /// `CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE`
    MemoryClockRate = 36,
    /// `CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH`
    GlobalMemoryBusWidth = 37,
    /// `CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE`
    L2CacheSize = 38,
    /// `CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR`
    MaxThreadsPerMultiprocessor = 39,
    /// `CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT`
    AsyncEngineCount = 40,
    /// `CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING`
    UnifiedAddressing = 41,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH`
    MaximumTexture1dLayeredWidth = 42,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS`
    MaximumTexture1dLayeredLayers = 43,
    /// `CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER`
    CanTex2dGather = 44,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH`
    MaximumTexture2dGatherWidth = 45,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT`
    MaximumTexture2dGatherHeight = 46,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE`
    MaximumTexture3dWidthAlternate = 47,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE`
    MaximumTexture3dHeightAlternate = 48,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE`
    MaximumTexture3dDepthAlternate = 49,
    /// `CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID`
    PciDomainId = 50,
    /// `CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT`
    TexturePitchAlignment = 51,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH`
    MaximumTexturecubemapWidth = 52,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH`
    MaximumTexturecubemapLayeredWidth = 53,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS`
    MaximumTexturecubemapLayeredLayers = 54,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH`
    MaximumSurface1dWidth = 55,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH`
    MaximumSurface2dWidth = 56,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT`
    MaximumSurface2dHeight = 57,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH`
    MaximumSurface3dWidth = 58,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT`
    MaximumSurface3dHeight = 59,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH`
    MaximumSurface3dDepth = 60,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH`
    MaximumSurface1dLayeredWidth = 61,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS`
    MaximumSurface1dLayeredLayers = 62,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH`
    MaximumSurface2dLayeredWidth = 63,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT`
    MaximumSurface2dLayeredHeight = 64,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS`
    MaximumSurface2dLayeredLayers = 65,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH`
    MaximumSurfacecubemapWidth = 66,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH`
    MaximumSurfacecubemapLayeredWidth = 67,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS`
    MaximumSurfacecubemapLayeredLayers = 68,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH`
    MaximumTexture1dLinearWidth = 69,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH`
    MaximumTexture2dLinearWidth = 70,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT`
    MaximumTexture2dLinearHeight = 71,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH`
    MaximumTexture2dLinearPitch = 72,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH`
    MaximumTexture2dMipmappedWidth = 73,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT`
    MaximumTexture2dMipmappedHeight = 74,
    /// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR`
    ComputeCapabilityMajor = 75,
    /// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR`
    ComputeCapabilityMinor = 76,
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH`
    MaximumTexture1dMipmappedWidth = 77,
    /// `CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED`
    StreamPrioritiesSupported = 78,
    /// `CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED`
    GlobalL1CacheSupported = 79,
    /// `CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED`
    LocalL1CacheSupported = 80,
    /// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR`
    MaxSharedMemoryPerMultiprocessor = 81,
    /// `CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR`
    MaxRegistersPerMultiprocessor = 82,
    /// `CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY`
    ManagedMemory = 83,
    /// `CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD`
    MultiGpuBoard = 84,
    /// `CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID`
    MultiGpuBoardGroupId = 85,
    /// `CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED`
    HostNativeAtomicSupported = 86,
    /// `CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO`
    SingleToDoublePrecisionPerfRatio = 87,
    /// `CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS`
    PageableMemoryAccess = 88,
    /// `CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS`
    ConcurrentManagedAccess = 89,
    /// `CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED`
    ComputePreemptionSupported = 90,
    /// `CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM`
    CanUseHostPointerForRegisteredMem = 91,
    /// `CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1`
    CanUseStreamMemOpsV1 = 92,
    /// `CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1`
    CanUse64BitStreamMemOpsV1 = 93,
    /// `CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1`
    CanUseStreamWaitValueNorV1 = 94,
    /// `CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH`
    CooperativeLaunch = 95,
    /// `CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH`
    CooperativeMultiDeviceLaunch = 96,
    /// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`
    MaxSharedMemoryPerBlockOptin = 97,
    /// `CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES`
    CanFlushRemoteWrites = 98,
    /// `CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED`
    HostRegisterSupported = 99,
    /// `CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES`
    PageableMemoryAccessUsesHostPageTables = 100,
    /// `CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST`
    DirectManagedMemAccessFromHost = 101,
    /// `CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED`
    VirtualAddressManagementSupported = 102,
    /// `CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED`
    HandleTypePosixFileDescriptorSupported = 103,
    /// `CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED`
    HandleTypeWin32HandleSupported = 104,
    /// `CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED`
    HandleTypeWin32KmtHandleSupported = 105,
    /// `CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR`
    MaxBlocksPerMultiprocessor = 106,
    /// `CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED`
    GenericCompressionSupported = 107,
    /// `CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE`
    MaxPersistingL2CacheSize = 108,
    /// `CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE`
    MaxAccessPolicyWindowSize = 109,
    /// `CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED`
    GpuDirectRdmaWithCudaVmmSupported = 110,
    /// `CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK`
    ReservedSharedMemoryPerBlock = 111,
    /// `CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED`
    SparseCudaArraySupported = 112,
    /// `CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED`
    ReadOnlyHostRegisterSupported = 113,
    /// `CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED`
    TimelineSemaphoreInteropSupported = 114,
    /// `CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED`
    MemoryPoolsSupported = 115,
    /// `CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED`
    GpuDirectRdmaSupported = 116,
    /// `CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS`
    GpuDirectRdmaFlushWritesOptions = 117,
    /// `CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING`
    GpuDirectRdmaWritesOrdering = 118,
    /// `CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES`
    MempoolSupportedHandleTypes = 119,
    /// `CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH`
    ClusterLaunch = 120,
    /// `CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED`
    DeferredMappingCudaArraySupported = 121,
    /// `CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS`
    CanUse64BitStreamMemOps = 122,
    /// `CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR`
    CanUseStreamWaitValueNor = 123,
    /// `CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED`
    DmaBufSupported = 124,
    /// `CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED`
    IpcEventSupported = 125,
    /// `CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT`
    MemSyncDomainCount = 126,
    /// `CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED`
    TensorMapAccessSupported = 127,
    /// `CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED`
    HandleTypeFabricSupported = 128,
    /// `CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS`
    UnifiedFunctionPointers = 129,
    /// `CU_DEVICE_ATTRIBUTE_NUMA_CONFIG`
    NumaConfig = 130,
    /// `CU_DEVICE_ATTRIBUTE_NUMA_ID`
    NumaId = 131,
    /// `CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED`
    MulticastSupported = 132,
    /// `CU_DEVICE_ATTRIBUTE_MPS_ENABLED`
    MpsEnabled = 133,
    /// `CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID`
    HostNumaId = 134,
    /// `CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED`
    D3d12CigSupported = 135,
    /// `CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK`
    MemDecompressAlgorithmMask = 136,
    /// `CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH`
    MemDecompressMaximumLength = 137,
    /// `CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED`
    VulkanCigSupported = 138,
    /// `CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID`
    GpuPciDeviceId = 139,
    /// `CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID`
    GpuPciSubsystemId = 140,
    /// `CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED`
    HostNumaVirtualMemoryManagementSupported = 141,
    /// `CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED`
    HostNumaMemoryPoolsSupported = 142,
    /// `CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED`
    HostNumaMultinodeIpcSupported = 143,
    /// `CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED`
    HostMemoryPoolsSupported = 144,
    /// `CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED`
    HostVirtualMemoryManagementSupported = 145,
    /// `CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED`
    HostAllocDmaBufSupported = 146,
    /// `CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED`
    OnlyPartialHostNativeAtomicSupported = 147,
    /// `CU_DEVICE_ATTRIBUTE_ATOMIC_REDUCTION_SUPPORTED`
    AtomicReductionSupported = 148,
    /// `CU_DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_COUNT`
    LocalityDomainCount = 149,
    /// `CU_DEVICE_ATTRIBUTE_MAX_OVERSIZED_SHARED_MEMORY_PER_BLOCK`
    MaxOversizedSharedMemoryPerBlock = 150,
    /// `CU_DEVICE_ATTRIBUTE_D3D12_CIG_STREAMS_SUPPORTED`
    D3d12CigStreamsSupported = 151,
    /// `CU_DEVICE_ATTRIBUTE_DMA_BUF_MMAP_SUPPORTED`
    DmaBufMmapSupported = 152,
    /// `CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_UNICAST_SUPPORTED`
    LogicalEndpointUnicastSupported = 153,
    /// `CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_MULTICAST_SUPPORTED`
    LogicalEndpointMulticastSupported = 154,
    /// `CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_COUNTED_OPS_SUPPORTED`
    LogicalEndpointCountedOpsSupported = 155,
    /// `CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_UNICAST_ACCESS_ON_OWNER_DEVICE_SUPPORTED`
    LogicalEndpointUnicastAccessOnOwnerDeviceSupported = 156,
    /// `CU_DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_MULTIPROCESSOR_COUNT`
    LocalityDomainMultiprocessorCount = 157,
    /// `CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_SUPPORTED_HANDLE_TYPES`
    LogicalEndpointSupportedHandleTypes = 158,
    /// `CU_DEVICE_ATTRIBUTE_VULKAN_CIG_STREAMS_SUPPORTED`
    VulkanCigStreamsSupported = 159,
    /// `CU_DEVICE_ATTRIBUTE_TENSOR_MAP_LARGE_TENSOR_MIN_SIZE`
    TensorMapLargeTensorMinSize = 160,
    /// `CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_LOCALIZED_MEMORY_SUPPORTED`
    GpuDirectRdmaWithLocalizedMemorySupported = 161,
}

impl DeviceAttr {
    pub fn from_raw(v: i32) -> Option<Self> {
        Some(match v {
            1 => Self::MaxThreadsPerBlock,
            2 => Self::MaxBlockDimX,
            3 => Self::MaxBlockDimY,
            4 => Self::MaxBlockDimZ,
            5 => Self::MaxGridDimX,
            6 => Self::MaxGridDimY,
            7 => Self::MaxGridDimZ,
            8 => Self::MaxSharedMemoryPerBlock,
            9 => Self::TotalConstantMemory,
            10 => Self::WarpSize,
            11 => Self::MaxPitch,
            12 => Self::MaxRegistersPerBlock,
            13 => Self::ClockRate,
            14 => Self::TextureAlignment,
            15 => Self::GpuOverlap,
            16 => Self::MultiprocessorCount,
            17 => Self::KernelExecTimeout,
            18 => Self::Integrated,
            19 => Self::CanMapHostMemory,
            20 => Self::ComputeMode,
            21 => Self::MaximumTexture1dWidth,
            22 => Self::MaximumTexture2dWidth,
            23 => Self::MaximumTexture2dHeight,
            24 => Self::MaximumTexture3dWidth,
            25 => Self::MaximumTexture3dHeight,
            26 => Self::MaximumTexture3dDepth,
            27 => Self::MaximumTexture2dLayeredWidth,
            28 => Self::MaximumTexture2dLayeredHeight,
            29 => Self::MaximumTexture2dLayeredLayers,
            30 => Self::SurfaceAlignment,
            31 => Self::ConcurrentKernels,
            32 => Self::EccEnabled,
            33 => Self::PciBusId,
            34 => Self::PciDeviceId,
            35 => Self::TccDriver,
            36 => Self::MemoryClockRate,
            37 => Self::GlobalMemoryBusWidth,
            38 => Self::L2CacheSize,
            39 => Self::MaxThreadsPerMultiprocessor,
            40 => Self::AsyncEngineCount,
            41 => Self::UnifiedAddressing,
            42 => Self::MaximumTexture1dLayeredWidth,
            43 => Self::MaximumTexture1dLayeredLayers,
            44 => Self::CanTex2dGather,
            45 => Self::MaximumTexture2dGatherWidth,
            46 => Self::MaximumTexture2dGatherHeight,
            47 => Self::MaximumTexture3dWidthAlternate,
            48 => Self::MaximumTexture3dHeightAlternate,
            49 => Self::MaximumTexture3dDepthAlternate,
            50 => Self::PciDomainId,
            51 => Self::TexturePitchAlignment,
            52 => Self::MaximumTexturecubemapWidth,
            53 => Self::MaximumTexturecubemapLayeredWidth,
            54 => Self::MaximumTexturecubemapLayeredLayers,
            55 => Self::MaximumSurface1dWidth,
            56 => Self::MaximumSurface2dWidth,
            57 => Self::MaximumSurface2dHeight,
            58 => Self::MaximumSurface3dWidth,
            59 => Self::MaximumSurface3dHeight,
            60 => Self::MaximumSurface3dDepth,
            61 => Self::MaximumSurface1dLayeredWidth,
            62 => Self::MaximumSurface1dLayeredLayers,
            63 => Self::MaximumSurface2dLayeredWidth,
            64 => Self::MaximumSurface2dLayeredHeight,
            65 => Self::MaximumSurface2dLayeredLayers,
            66 => Self::MaximumSurfacecubemapWidth,
            67 => Self::MaximumSurfacecubemapLayeredWidth,
            68 => Self::MaximumSurfacecubemapLayeredLayers,
            69 => Self::MaximumTexture1dLinearWidth,
            70 => Self::MaximumTexture2dLinearWidth,
            71 => Self::MaximumTexture2dLinearHeight,
            72 => Self::MaximumTexture2dLinearPitch,
            73 => Self::MaximumTexture2dMipmappedWidth,
            74 => Self::MaximumTexture2dMipmappedHeight,
            75 => Self::ComputeCapabilityMajor,
            76 => Self::ComputeCapabilityMinor,
            77 => Self::MaximumTexture1dMipmappedWidth,
            78 => Self::StreamPrioritiesSupported,
            79 => Self::GlobalL1CacheSupported,
            80 => Self::LocalL1CacheSupported,
            81 => Self::MaxSharedMemoryPerMultiprocessor,
            82 => Self::MaxRegistersPerMultiprocessor,
            83 => Self::ManagedMemory,
            84 => Self::MultiGpuBoard,
            85 => Self::MultiGpuBoardGroupId,
            86 => Self::HostNativeAtomicSupported,
            87 => Self::SingleToDoublePrecisionPerfRatio,
            88 => Self::PageableMemoryAccess,
            89 => Self::ConcurrentManagedAccess,
            90 => Self::ComputePreemptionSupported,
            91 => Self::CanUseHostPointerForRegisteredMem,
            92 => Self::CanUseStreamMemOpsV1,
            93 => Self::CanUse64BitStreamMemOpsV1,
            94 => Self::CanUseStreamWaitValueNorV1,
            95 => Self::CooperativeLaunch,
            96 => Self::CooperativeMultiDeviceLaunch,
            97 => Self::MaxSharedMemoryPerBlockOptin,
            98 => Self::CanFlushRemoteWrites,
            99 => Self::HostRegisterSupported,
            100 => Self::PageableMemoryAccessUsesHostPageTables,
            101 => Self::DirectManagedMemAccessFromHost,
            102 => Self::VirtualAddressManagementSupported,
            103 => Self::HandleTypePosixFileDescriptorSupported,
            104 => Self::HandleTypeWin32HandleSupported,
            105 => Self::HandleTypeWin32KmtHandleSupported,
            106 => Self::MaxBlocksPerMultiprocessor,
            107 => Self::GenericCompressionSupported,
            108 => Self::MaxPersistingL2CacheSize,
            109 => Self::MaxAccessPolicyWindowSize,
            110 => Self::GpuDirectRdmaWithCudaVmmSupported,
            111 => Self::ReservedSharedMemoryPerBlock,
            112 => Self::SparseCudaArraySupported,
            113 => Self::ReadOnlyHostRegisterSupported,
            114 => Self::TimelineSemaphoreInteropSupported,
            115 => Self::MemoryPoolsSupported,
            116 => Self::GpuDirectRdmaSupported,
            117 => Self::GpuDirectRdmaFlushWritesOptions,
            118 => Self::GpuDirectRdmaWritesOrdering,
            119 => Self::MempoolSupportedHandleTypes,
            120 => Self::ClusterLaunch,
            121 => Self::DeferredMappingCudaArraySupported,
            122 => Self::CanUse64BitStreamMemOps,
            123 => Self::CanUseStreamWaitValueNor,
            124 => Self::DmaBufSupported,
            125 => Self::IpcEventSupported,
            126 => Self::MemSyncDomainCount,
            127 => Self::TensorMapAccessSupported,
            128 => Self::HandleTypeFabricSupported,
            129 => Self::UnifiedFunctionPointers,
            130 => Self::NumaConfig,
            131 => Self::NumaId,
            132 => Self::MulticastSupported,
            133 => Self::MpsEnabled,
            134 => Self::HostNumaId,
            135 => Self::D3d12CigSupported,
            136 => Self::MemDecompressAlgorithmMask,
            137 => Self::MemDecompressMaximumLength,
            138 => Self::VulkanCigSupported,
            139 => Self::GpuPciDeviceId,
            140 => Self::GpuPciSubsystemId,
            141 => Self::HostNumaVirtualMemoryManagementSupported,
            142 => Self::HostNumaMemoryPoolsSupported,
            143 => Self::HostNumaMultinodeIpcSupported,
            144 => Self::HostMemoryPoolsSupported,
            145 => Self::HostVirtualMemoryManagementSupported,
            146 => Self::HostAllocDmaBufSupported,
            147 => Self::OnlyPartialHostNativeAtomicSupported,
            148 => Self::AtomicReductionSupported,
            149 => Self::LocalityDomainCount,
            150 => Self::MaxOversizedSharedMemoryPerBlock,
            151 => Self::D3d12CigStreamsSupported,
            152 => Self::DmaBufMmapSupported,
            153 => Self::LogicalEndpointUnicastSupported,
            154 => Self::LogicalEndpointMulticastSupported,
            155 => Self::LogicalEndpointCountedOpsSupported,
            156 => Self::LogicalEndpointUnicastAccessOnOwnerDeviceSupported,
            157 => Self::LocalityDomainMultiprocessorCount,
            158 => Self::LogicalEndpointSupportedHandleTypes,
            159 => Self::VulkanCigStreamsSupported,
            160 => Self::TensorMapLargeTensorMinSize,
            161 => Self::GpuDirectRdmaWithLocalizedMemorySupported,
            _ => return None,
        })
    }
}

/// `CUpointer_attribute`.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PointerAttr {
    /// `CU_POINTER_ATTRIBUTE_CONTEXT`
    Context = 1,
    /// `CU_POINTER_ATTRIBUTE_MEMORY_TYPE`
    MemoryType = 2,
    /// `CU_POINTER_ATTRIBUTE_DEVICE_POINTER`
    DevicePointer = 3,
    /// `CU_POINTER_ATTRIBUTE_HOST_POINTER`
    HostPointer = 4,
    /// `CU_POINTER_ATTRIBUTE_P2P_TOKENS`
    P2pTokens = 5,
    /// `CU_POINTER_ATTRIBUTE_SYNC_MEMOPS`
    SyncMemops = 6,
    /// `CU_POINTER_ATTRIBUTE_BUFFER_ID`
    BufferId = 7,
    /// `CU_POINTER_ATTRIBUTE_IS_MANAGED`
    IsManaged = 8,
    /// `CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL`
    DeviceOrdinal = 9,
    /// `CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE`
    IsLegacyCudaIpcCapable = 10,
    /// `CU_POINTER_ATTRIBUTE_RANGE_START_ADDR`
    RangeStartAddr = 11,
    /// `CU_POINTER_ATTRIBUTE_RANGE_SIZE`
    RangeSize = 12,
    /// `CU_POINTER_ATTRIBUTE_MAPPED`
    Mapped = 13,
    /// `CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES`
    AllowedHandleTypes = 14,
    /// `CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE`
    IsGpuDirectRdmaCapable = 15,
    /// `CU_POINTER_ATTRIBUTE_ACCESS_FLAGS`
    AccessFlags = 16,
    /// `CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE`
    MempoolHandle = 17,
    /// `CU_POINTER_ATTRIBUTE_MAPPING_SIZE`
    MappingSize = 18,
    /// `CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR`
    MappingBaseAddr = 19,
    /// `CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID`
    MemoryBlockId = 20,
    /// `CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE`
    IsHwDecompressCapable = 21,
    /// `CU_POINTER_ATTRIBUTE_LOCALITY_DOMAIN_ORDINAL`
    LocalityDomainOrdinal = 22,
}

impl PointerAttr {
    pub fn from_raw(v: i32) -> Option<Self> {
        Some(match v {
            1 => Self::Context,
            2 => Self::MemoryType,
            3 => Self::DevicePointer,
            4 => Self::HostPointer,
            5 => Self::P2pTokens,
            6 => Self::SyncMemops,
            7 => Self::BufferId,
            8 => Self::IsManaged,
            9 => Self::DeviceOrdinal,
            10 => Self::IsLegacyCudaIpcCapable,
            11 => Self::RangeStartAddr,
            12 => Self::RangeSize,
            13 => Self::Mapped,
            14 => Self::AllowedHandleTypes,
            15 => Self::IsGpuDirectRdmaCapable,
            16 => Self::AccessFlags,
            17 => Self::MempoolHandle,
            18 => Self::MappingSize,
            19 => Self::MappingBaseAddr,
            20 => Self::MemoryBlockId,
            21 => Self::IsHwDecompressCapable,
            22 => Self::LocalityDomainOrdinal,
            _ => return None,
        })
    }
}

/// `CUfunction_attribute`.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FuncAttr {
    /// `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`
    MaxThreadsPerBlock = 0,
    /// `CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES`
    SharedSizeBytes = 1,
    /// `CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES`
    ConstSizeBytes = 2,
    /// `CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES`
    LocalSizeBytes = 3,
    /// `CU_FUNC_ATTRIBUTE_NUM_REGS`
    NumRegs = 4,
    /// `CU_FUNC_ATTRIBUTE_PTX_VERSION`
    PtxVersion = 5,
    /// `CU_FUNC_ATTRIBUTE_BINARY_VERSION`
    BinaryVersion = 6,
    /// `CU_FUNC_ATTRIBUTE_CACHE_MODE_CA`
    CacheModeCa = 7,
    /// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`
    MaxDynamicSharedSizeBytes = 8,
    /// `CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT`
    PreferredSharedMemoryCarveout = 9,
    /// `CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET`
    ClusterSizeMustBeSet = 10,
    /// `CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH`
    RequiredClusterWidth = 11,
    /// `CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT`
    RequiredClusterHeight = 12,
    /// `CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH`
    RequiredClusterDepth = 13,
    /// `CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED`
    NonPortableClusterSizeAllowed = 14,
    /// `CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE`
    ClusterSchedulingPolicyPreference = 15,
    /// `CU_FUNC_ATTRIBUTE_DEVICE_NODE_UPDATE_SUPPORTED`
    DeviceNodeUpdateSupported = 16,
    /// `CU_FUNC_ATTRIBUTE_SHARED_MEMORY_MODE`
    SharedMemoryMode = 17,
}

impl FuncAttr {
    pub fn from_raw(v: i32) -> Option<Self> {
        Some(match v {
            0 => Self::MaxThreadsPerBlock,
            1 => Self::SharedSizeBytes,
            2 => Self::ConstSizeBytes,
            3 => Self::LocalSizeBytes,
            4 => Self::NumRegs,
            5 => Self::PtxVersion,
            6 => Self::BinaryVersion,
            7 => Self::CacheModeCa,
            8 => Self::MaxDynamicSharedSizeBytes,
            9 => Self::PreferredSharedMemoryCarveout,
            10 => Self::ClusterSizeMustBeSet,
            11 => Self::RequiredClusterWidth,
            12 => Self::RequiredClusterHeight,
            13 => Self::RequiredClusterDepth,
            14 => Self::NonPortableClusterSizeAllowed,
            15 => Self::ClusterSchedulingPolicyPreference,
            16 => Self::DeviceNodeUpdateSupported,
            17 => Self::SharedMemoryMode,
            _ => return None,
        })
    }
}

/// `CUjit_option`.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JitOption {
    /// `CU_JIT_MAX_REGISTERS`
    MaxRegisters = 0,
    /// `CU_JIT_THREADS_PER_BLOCK`
    ThreadsPerBlock = 1,
    /// `CU_JIT_WALL_TIME`
    WallTime = 2,
    /// `CU_JIT_INFO_LOG_BUFFER`
    InfoLogBuffer = 3,
    /// `CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES`
    InfoLogBufferSizeBytes = 4,
    /// `CU_JIT_ERROR_LOG_BUFFER`
    ErrorLogBuffer = 5,
    /// `CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES`
    ErrorLogBufferSizeBytes = 6,
    /// `CU_JIT_OPTIMIZATION_LEVEL`
    OptimizationLevel = 7,
    /// `CU_JIT_TARGET_FROM_CUCONTEXT`
    TargetFromCucontext = 8,
    /// `CU_JIT_TARGET`
    Target = 9,
    /// `CU_JIT_FALLBACK_STRATEGY`
    FallbackStrategy = 10,
    /// `CU_JIT_GENERATE_DEBUG_INFO`
    GenerateDebugInfo = 11,
    /// `CU_JIT_LOG_VERBOSE`
    LogVerbose = 12,
    /// `CU_JIT_GENERATE_LINE_INFO`
    GenerateLineInfo = 13,
    /// `CU_JIT_CACHE_MODE`
    CacheMode = 14,
    /// `CU_JIT_NEW_SM3X_OPT`
    NewSm3xOpt = 15,
    /// `CU_JIT_FAST_COMPILE`
    FastCompile = 16,
    /// `CU_JIT_GLOBAL_SYMBOL_NAMES`
    GlobalSymbolNames = 17,
    /// `CU_JIT_GLOBAL_SYMBOL_ADDRESSES`
    GlobalSymbolAddresses = 18,
    /// `CU_JIT_GLOBAL_SYMBOL_COUNT`
    GlobalSymbolCount = 19,
    /// `CU_JIT_LTO`
    Lto = 20,
    /// `CU_JIT_FTZ`
    Ftz = 21,
    /// `CU_JIT_PREC_DIV`
    PrecDiv = 22,
    /// `CU_JIT_PREC_SQRT`
    PrecSqrt = 23,
    /// `CU_JIT_FMA`
    Fma = 24,
    /// `CU_JIT_REFERENCED_KERNEL_NAMES`
    ReferencedKernelNames = 25,
    /// `CU_JIT_REFERENCED_KERNEL_COUNT`
    ReferencedKernelCount = 26,
    /// `CU_JIT_REFERENCED_VARIABLE_NAMES`
    ReferencedVariableNames = 27,
    /// `CU_JIT_REFERENCED_VARIABLE_COUNT`
    ReferencedVariableCount = 28,
    /// `CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES`
    OptimizeUnusedDeviceVariables = 29,
    /// `CU_JIT_POSITION_INDEPENDENT_CODE`
    PositionIndependentCode = 30,
    /// `CU_JIT_MIN_CTA_PER_SM`
    MinCtaPerSm = 31,
    /// `CU_JIT_MAX_THREADS_PER_BLOCK`
    MaxThreadsPerBlock = 32,
    /// `CU_JIT_OVERRIDE_DIRECTIVE_VALUES`
    OverrideDirectiveValues = 33,
    /// `CU_JIT_SPLIT_COMPILE`
    SplitCompile = 34,
    /// `CU_JIT_BINARY_LOADER_THREAD_COUNT`
    BinaryLoaderThreadCount = 35,
}

impl JitOption {
    pub fn from_raw(v: i32) -> Option<Self> {
        Some(match v {
            0 => Self::MaxRegisters,
            1 => Self::ThreadsPerBlock,
            2 => Self::WallTime,
            3 => Self::InfoLogBuffer,
            4 => Self::InfoLogBufferSizeBytes,
            5 => Self::ErrorLogBuffer,
            6 => Self::ErrorLogBufferSizeBytes,
            7 => Self::OptimizationLevel,
            8 => Self::TargetFromCucontext,
            9 => Self::Target,
            10 => Self::FallbackStrategy,
            11 => Self::GenerateDebugInfo,
            12 => Self::LogVerbose,
            13 => Self::GenerateLineInfo,
            14 => Self::CacheMode,
            15 => Self::NewSm3xOpt,
            16 => Self::FastCompile,
            17 => Self::GlobalSymbolNames,
            18 => Self::GlobalSymbolAddresses,
            19 => Self::GlobalSymbolCount,
            20 => Self::Lto,
            21 => Self::Ftz,
            22 => Self::PrecDiv,
            23 => Self::PrecSqrt,
            24 => Self::Fma,
            25 => Self::ReferencedKernelNames,
            26 => Self::ReferencedKernelCount,
            27 => Self::ReferencedVariableNames,
            28 => Self::ReferencedVariableCount,
            29 => Self::OptimizeUnusedDeviceVariables,
            30 => Self::PositionIndependentCode,
            31 => Self::MinCtaPerSm,
            32 => Self::MaxThreadsPerBlock,
            33 => Self::OverrideDirectiveValues,
            34 => Self::SplitCompile,
            35 => Self::BinaryLoaderThreadCount,
            _ => return None,
        })
    }
}

/// `CUjitInputType`.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JitInputType {
    /// `CU_JIT_INPUT_CUBIN`
    InputCubin = 0,
    /// `CU_JIT_INPUT_PTX`
    InputPtx = 1,
    /// `CU_JIT_INPUT_FATBINARY`
    InputFatbinary = 2,
    /// `CU_JIT_INPUT_OBJECT`
    InputObject = 3,
    /// `CU_JIT_INPUT_LIBRARY`
    InputLibrary = 4,
    /// `CU_JIT_INPUT_NVVM`
    InputNvvm = 5,
    /// `CU_JIT_NUM_INPUT_TYPES`
    NumInputTypes = 6,
}

impl JitInputType {
    pub fn from_raw(v: i32) -> Option<Self> {
        Some(match v {
            0 => Self::InputCubin,
            1 => Self::InputPtx,
            2 => Self::InputFatbinary,
            3 => Self::InputObject,
            4 => Self::InputLibrary,
            5 => Self::InputNvvm,
            6 => Self::NumInputTypes,
            _ => return None,
        })
    }
}

/// `CUlimit`.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Limit {
    /// `CU_LIMIT_STACK_SIZE`
    StackSize = 0,
    /// `CU_LIMIT_PRINTF_FIFO_SIZE`
    PrintfFifoSize = 1,
    /// `CU_LIMIT_MALLOC_HEAP_SIZE`
    MallocHeapSize = 2,
    /// `CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH`
    DevRuntimeSyncDepth = 3,
    /// `CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT`
    DevRuntimePendingLaunchCount = 4,
    /// `CU_LIMIT_MAX_L2_FETCH_GRANULARITY`
    MaxL2FetchGranularity = 5,
    /// `CU_LIMIT_PERSISTING_L2_CACHE_SIZE`
    PersistingL2CacheSize = 6,
    /// `CU_LIMIT_SHMEM_SIZE`
    ShmemSize = 7,
    /// `CU_LIMIT_CIG_ENABLED`
    CigEnabled = 8,
    /// `CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED`
    CigShmemFallbackEnabled = 9,
    /// `CU_LIMIT_PER_BLOCK_MEMORY_SIZE`
    PerBlockMemorySize = 10,
}

impl Limit {
    pub fn from_raw(v: i32) -> Option<Self> {
        Some(match v {
            0 => Self::StackSize,
            1 => Self::PrintfFifoSize,
            2 => Self::MallocHeapSize,
            3 => Self::DevRuntimeSyncDepth,
            4 => Self::DevRuntimePendingLaunchCount,
            5 => Self::MaxL2FetchGranularity,
            6 => Self::PersistingL2CacheSize,
            7 => Self::ShmemSize,
            8 => Self::CigEnabled,
            9 => Self::CigShmemFallbackEnabled,
            10 => Self::PerBlockMemorySize,
            _ => return None,
        })
    }
}

/// `CUmemorytype`.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryType {
    /// `CU_MEMORYTYPE_HOST`
    Host = 1,
    /// `CU_MEMORYTYPE_DEVICE`
    Device = 2,
    /// `CU_MEMORYTYPE_ARRAY`
    Array = 3,
    /// `CU_MEMORYTYPE_UNIFIED`
    Unified = 4,
}

impl MemoryType {
    pub fn from_raw(v: i32) -> Option<Self> {
        Some(match v {
            1 => Self::Host,
            2 => Self::Device,
            3 => Self::Array,
            4 => Self::Unified,
            _ => return None,
        })
    }
}

/// `CUlaunchAttributeID`.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaunchAttrId {
    /// `CU_LAUNCH_ATTRIBUTE_IGNORE`
    Ignore = 0,
    /// `CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW`
    AccessPolicyWindow = 1,
    /// `CU_LAUNCH_ATTRIBUTE_COOPERATIVE`
    Cooperative = 2,
    /// `CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY`
    SynchronizationPolicy = 3,
    /// `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`
    ClusterDimension = 4,
    /// `CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE`
    ClusterSchedulingPolicyPreference = 5,
    /// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`
    ProgrammaticStreamSerialization = 6,
    /// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT`
    ProgrammaticEvent = 7,
    /// `CU_LAUNCH_ATTRIBUTE_PRIORITY`
    Priority = 8,
    /// `CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP`
    MemSyncDomainMap = 9,
    /// `CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN`
    MemSyncDomain = 10,
    /// `CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION`
    PreferredClusterDimension = 11,
    /// `CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT`
    LaunchCompletionEvent = 12,
    /// `CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE`
    DeviceUpdatableKernelNode = 13,
    /// `CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT`
    PreferredSharedMemoryCarveout = 14,
    /// `CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING`
    NvlinkUtilCentricScheduling = 16,
    /// `CU_LAUNCH_ATTRIBUTE_PORTABLE_CLUSTER_SIZE_MODE`
    PortableClusterSizeMode = 17,
    /// `CU_LAUNCH_ATTRIBUTE_SHARED_MEMORY_MODE`
    SharedMemoryMode = 18,
}

impl LaunchAttrId {
    pub fn from_raw(v: i32) -> Option<Self> {
        Some(match v {
            0 => Self::Ignore,
            1 => Self::AccessPolicyWindow,
            2 => Self::Cooperative,
            3 => Self::SynchronizationPolicy,
            4 => Self::ClusterDimension,
            5 => Self::ClusterSchedulingPolicyPreference,
            6 => Self::ProgrammaticStreamSerialization,
            7 => Self::ProgrammaticEvent,
            8 => Self::Priority,
            9 => Self::MemSyncDomainMap,
            10 => Self::MemSyncDomain,
            11 => Self::PreferredClusterDimension,
            12 => Self::LaunchCompletionEvent,
            13 => Self::DeviceUpdatableKernelNode,
            14 => Self::PreferredSharedMemoryCarveout,
            16 => Self::NvlinkUtilCentricScheduling,
            17 => Self::PortableClusterSizeMode,
            18 => Self::SharedMemoryMode,
            _ => return None,
        })
    }
}

/// `CUdriverProcAddressQueryResult`.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProcAddressQuery {
    /// `CU_GET_PROC_ADDRESS_SUCCESS`
    Success = 0,
    /// `CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND`
    SymbolNotFound = 1,
    /// `CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT`
    VersionNotSufficient = 2,
}

impl ProcAddressQuery {
    pub fn from_raw(v: i32) -> Option<Self> {
        Some(match v {
            0 => Self::Success,
            1 => Self::SymbolNotFound,
            2 => Self::VersionNotSufficient,
            _ => return None,
        })
    }
}
