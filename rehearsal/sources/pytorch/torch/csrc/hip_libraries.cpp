// The ROCm libraries PyTorch's libtorch_hip.so links, each by one of its entry
// points, so the stand-in needs them (DT_NEEDED) and binds a symbol of each at
// load time as the real library does: `import torch` fails on an image that
// lost one, with the loader's "cannot open shared object file" naming it.
//
// The set is PyTorch's (docs/rehearsal.md, "What the stand-ins link"):
// cmake/Dependencies.cmake puts hip::amdhip64, MIOpen, hiprtc::hiprtc in
// Caffe2_PUBLIC_HIP_DEPENDENCY_LIBS and roc::hipblaslt, roc::hipblas,
// hip::hipfft, hip::hiprand, roc::hipsparse, roc::hipsolver, roc::rocblas,
// roc::rocsolver, roc::hipsparselt in Caffe2_HIP_DEPENDENCY_LIBS;
// cmake/public/LoadHIP.cmake requires hsa-runtime64 and rocm_smi; MIOpen
// brings roctx64. Not here: roctracer (Kineto's), which Debian does not package.
#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <string>

// C entry points, declared as their headers do (only their addresses are taken)
extern "C" {
int miopenGetVersion(size_t*, size_t*, size_t*);
int hipblasLtCreate(void**);
int hipblasCreate(void**);
int rocblas_get_version_string_size(size_t*);
int hipfftGetVersion(int*);
int hiprandCreateGenerator(void**, int);
int hipsparseCreate(void**);
int hipsolverCreate(void**);
int rocsolver_get_version_string_size(size_t*);
int hiprtcVersion(int*, int*);
void roctxMarkA(const char*);
int hsa_init(void);
int rsmi_init(uint64_t);
int hipsparseLtInit(void*);
}

namespace {

struct Linked {
    const char* library;
    const void* entry;
};

// function addresses, bound by the loader when libtorch_hip.so loads
const Linked kLinked[] = {
    {"MIOpen", reinterpret_cast<const void*>(&miopenGetVersion)},
    {"hipblaslt", reinterpret_cast<const void*>(&hipblasLtCreate)},
    {"hipblas", reinterpret_cast<const void*>(&hipblasCreate)},
    {"rocblas", reinterpret_cast<const void*>(&rocblas_get_version_string_size)},
    {"hipfft", reinterpret_cast<const void*>(&hipfftGetVersion)},
    {"hiprand", reinterpret_cast<const void*>(&hiprandCreateGenerator)},
    {"hipsparse", reinterpret_cast<const void*>(&hipsparseCreate)},
    {"hipsolver", reinterpret_cast<const void*>(&hipsolverCreate)},
    {"rocsolver", reinterpret_cast<const void*>(&rocsolver_get_version_string_size)},
    {"hiprtc", reinterpret_cast<const void*>(&hiprtcVersion)},
    {"roctx64", reinterpret_cast<const void*>(&roctxMarkA)},
    {"hsa-runtime64", reinterpret_cast<const void*>(&hsa_init)},
    {"rocm_smi64", reinterpret_cast<const void*>(&rsmi_init)},
    {"hipsparselt", reinterpret_cast<const void*>(&hipsparseLtInit)},
};

}  // namespace

// "library=/path/of/the/file/that/provides/it;..." for torch._C._linked_libraries()
extern "C" const char* torch_hip_linked_libraries() {
    static std::string text;
    if (text.empty()) {
        for (const Linked& linked : kLinked) {
            Dl_info info{};
            const char* file = dladdr(linked.entry, &info) && info.dli_fname ? info.dli_fname : "?";
            text += std::string(linked.library) + "=" + file + ";";
        }
    }
    return text.c_str();
}
