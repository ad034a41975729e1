/* The no-driver and no-NVRTC paths, for real: the loader is pointed at
 * libraries that do not exist (KF_LIBCUDA, KF_LIBNVRTC), so every call that
 * needs them fails with KF_ERR_DEVICE and a message saying what is missing
 * and what still works, while the CPU device keeps working. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "nvrtc.h"

static void cuda_device_open_without_driver_is_device_error(void **state)
{
    kf_device *d = (kf_device *)1;
    kf_error e = {0};
    assert_int_equal(kf_device_open(KF_BACKEND_CUDA, 0, &d, &e), KF_ERR_DEVICE);
    assert_null(d);
    assert_non_null(strstr(e.msg, "no CUDA driver: cannot load libcuda.so.1"));
    assert_non_null(strstr(e.msg, "/nonexistent/libcuda.so.1"));
    assert_non_null(strstr(e.msg, "--backend cpu works without"));
}

static void ptx_device_open_without_driver_is_device_error(void **state)
{
    kf_device *d = (kf_device *)1;
    kf_error e = {0};
    assert_int_equal(kf_device_open(KF_BACKEND_PTX, 1, &d, &e), KF_ERR_DEVICE);
    assert_null(d);
    assert_non_null(strstr(e.msg, "no CUDA driver"));
}

static void device_count_without_driver_is_device_error(void **state)
{
    int n = -1, v = -1;
    kf_error e = {0};
    assert_int_equal(kf_cuda_device_count(&n, &v, &e), KF_ERR_DEVICE);
    assert_int_equal(n, 0);
    assert_int_equal(v, 0);
    assert_non_null(strstr(e.msg, "no CUDA driver"));
}

static void nvrtc_compile_without_nvrtc_is_device_error(void **state)
{
    char *ptx = (char *)1, *log = (char *)1;
    kf_error e = {0};
    assert_int_equal(kf_nvrtc_compile("__global__ void k(){}", "k.cu", 90, false, &ptx, &log, &e), KF_ERR_DEVICE);
    assert_null(ptx);
    assert_null(log);
    assert_non_null(strstr(e.msg, "NVRTC is not available"));
    assert_non_null(strstr(e.msg, "/nonexistent/libnvrtc.so"));
    assert_non_null(strstr(e.msg, "use the ptx backend"));
    assert_int_equal(kf_nvrtc_version(), 0);
}

static void cpu_device_works_without_driver(void **state)
{
    kf_device *d;
    kf_buffer *b;
    kf_error e = {0};
    assert_int_equal(kf_device_open(KF_BACKEND_CPU, 0, &d, &e), KF_OK);
    assert_int_equal(kf_buffer_create(d, kf_type_scalar(KF_S_U32), 8, &b, &e), KF_OK);
    uint32_t in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
    assert_int_equal(kf_buffer_upload(b, in, sizeof in, &e), KF_OK);
    assert_int_equal(kf_buffer_download(b, out, sizeof out, &e), KF_OK);
    assert_memory_equal(in, out, sizeof in);
    kf_buffer_destroy(b);
    kf_device_close(d);
}

int main(void)
{
    setenv("KF_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    setenv("KF_LIBNVRTC", "/nonexistent/libnvrtc.so", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cuda_device_open_without_driver_is_device_error),
        cmocka_unit_test(ptx_device_open_without_driver_is_device_error),
        cmocka_unit_test(device_count_without_driver_is_device_error),
        cmocka_unit_test(nvrtc_compile_without_nvrtc_is_device_error),
        cmocka_unit_test(cpu_device_works_without_driver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
