// The public header from C++17 (-Wall -Wextra -Wpedantic -Werror): every
// declaration compiles inside extern "C", the inline helpers are valid C++,
// and a kernel compiled from a string runs on the CPU device through the
// library this build made (the shared one with BUILD_SHARED_LIBS: only its
// exported functions are used). Prints "api_header_cxx: ok".
#include <kforge.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace {

struct module_free {
    void operator()(kf_module *m) const { kf_module_free(m); }
};
struct device_close {
    void operator()(kf_device *d) const { kf_device_close(d); }
};
struct pipeline_destroy {
    void operator()(kf_pipeline *p) const { kf_pipeline_destroy(p); }
};
struct buffer_destroy {
    void operator()(kf_buffer *b) const { kf_buffer_destroy(b); }
};

bool check(kf_status st, const kf_error &err, const char *what)
{
    if (st == KF_OK) return true;
    std::fprintf(stderr, "api_header_cxx: %s: %s: %s\n", what, kf_status_name(st), err.msg);
    return false;
}

const char source[] = R"(
@schedule(block = 32, grid = cdiv(n, 32))
kernel square(x: &mut [i32], n: u32) {
    let i = global_id.x;
    if i < n { x[i] = x[i] * x[i]; }
}
)";

}  // namespace

int main()
{
    static_assert(KF_VERSION_NUMBER >= 100, "version macros");
    kf_module *raw = nullptr;
    kf_status st = kf_compile("square.kf", source, std::strlen(source), nullptr, &raw);
    std::unique_ptr<kf_module, module_free> m(raw);
    if (st != KF_OK) {
        std::fputs(m ? kf_module_diagnostics(m.get()) : "out of memory\n", stderr);
        return 1;
    }
    kf_error err = {};
    kf_device *d = nullptr;
    if (!check(kf_device_open(KF_BACKEND_CPU, 0, &d, &err), err, "kf_device_open")) return 1;
    std::unique_ptr<kf_device, device_close> dev(d);
    kf_pipeline *p = nullptr;
    if (!check(kf_pipeline_create(dev.get(), m.get(), kf_module_kernel(m.get(), "square"), &p, &err), err,
               "kf_pipeline_create"))
        return 1;
    std::unique_ptr<kf_pipeline, pipeline_destroy> pipe(p);

    std::vector<int32_t> host(70);
    for (size_t i = 0; i < host.size(); i++) host[i] = static_cast<int32_t>(i) - 35;
    kf_buffer *b = nullptr;
    if (!check(kf_buffer_wrap(dev.get(), kf_type_scalar(KF_S_I32), host.size(), host.data(), &b, &err), err,
               "kf_buffer_wrap"))
        return 1;
    std::unique_ptr<kf_buffer, buffer_destroy> buf(b);
    kf_arg args[] = {kf_arg_buffer(buf.get()), kf_arg_value(kf_value_u32(static_cast<uint32_t>(host.size())))};
    if (!check(kf_dispatch(pipe.get(), args, 2, nullptr, KF_DISPATCH_SYNC, nullptr, &err), err, "kf_dispatch"))
        return 1;
    for (size_t i = 0; i < host.size(); i++) {
        int32_t want = (static_cast<int32_t>(i) - 35) * (static_cast<int32_t>(i) - 35);
        if (host[i] != want) {
            std::fprintf(stderr, "api_header_cxx: x[%zu] = %d, want %d\n", i, host[i], want);
            return 1;
        }
    }
    std::puts("api_header_cxx: ok");
    return 0;
}
