/* The deferred inputs of `kforge bench` (tools/cmd_common.c,
 * kf_cli_buffer_make) on the CPU device: a rand() buffer larger than
 * KF_CLI_TILE_BYTES holds its first tile exactly as kf_fill makes it and
 * then that tile repeated, to the last element of an odd length; iota is
 * exact over the whole buffer; zeros stays zero; deferred binding keeps
 * generators off the host. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "../tools/cmd_common.h"
#include "../tools/fill.h"
#include "../tools/npy.h"

static kf_device *cpu;

static int setup(void **state)
{
    kf_error e = {0};
    return kf_device_open(KF_BACKEND_CPU, 0, &cpu, &e) == KF_OK ? 0 : -1;
}

static int teardown(void **state)
{
    kf_device_close(cpu);
    return 0;
}

static uint16_t *made(kf_type elem, size_t n, const kf_fill_spec *gen)
{
    kf_buffer *b;
    kf_error e = {0};
    assert_int_equal(kf_cli_buffer_make(cpu, elem, n, NULL, gen, &b, &e), KF_OK);
    uint16_t *got = malloc(n * kf_type_elem_bytes(elem));
    assert_non_null(got);
    assert_int_equal(kf_buffer_download(b, got, n * kf_type_elem_bytes(elem), &e), KF_OK);
    kf_buffer_destroy(b);
    return got;
}

static void test_rand_repeats_its_first_tile_to_an_odd_end(void **state)
{
    size_t tile = KF_CLI_TILE_BYTES / 2, n = 3 * tile + 12345;
    kf_fill_spec gen = {KF_FILL_RAND, n, 7};
    uint16_t *got = made(kf_type_scalar(KF_S_F16), n, &gen);
    uint16_t *want = malloc(tile * 2);
    assert_non_null(want);
    kf_fill(want, kf_type_scalar(KF_S_F16), tile, &gen);
    assert_memory_equal(got, want, tile * 2);
    size_t bad = 0;
    for (size_t i = tile; i < n; i++) bad += got[i] != want[i % tile];
    assert_int_equal(bad, 0);
    assert_true(want[0] != want[1] || want[1] != want[2]);   /* not a constant */
    free(want);
    free(got);
}

static void test_iota_is_exact_and_zeros_stay_zero(void **state)
{
    size_t n = KF_CLI_TILE_BYTES / 4 + 3;
    kf_fill_spec iota = {KF_FILL_IOTA, n, 0}, zeros = {KF_FILL_ZEROS, n, 0};
    uint32_t *got = (uint32_t *)made(kf_type_scalar(KF_S_U32), n, &iota);
    for (size_t i = 0; i < n; i++)
        if (got[i] != i) fail_msg("iota[%zu] = %u", i, got[i]);
    free(got);
    got = (uint32_t *)made(kf_type_scalar(KF_S_U32), n, &zeros);
    for (size_t i = 0; i < n; i++)
        if (got[i]) fail_msg("zeros[%zu] = %u", i, got[i]);
    free(got);
}

static void test_deferred_binding_keeps_generators_off_the_host(void **state)
{
    kf_module *m;
    const char *src = "kernel k(x: &[f16x8], y: &mut [f32], n: u32) {}\n";
    assert_int_equal(kf_compile("k.kf", src, strlen(src), NULL, &m), KF_OK);
    char b0[] = "x=rand(1000000,3)", b1[] = "y=zeros(9)", b2[] = "n=5";
    kf_cli_binding b[3];
    assert_true(kf_cli_binding_split(b0, &b[0]) && kf_cli_binding_split(b1, &b[1]) && kf_cli_binding_split(b2, &b[2]));
    kf_cli_inputs in;
    kf_error e = {0};
    assert_int_equal(kf_cli_inputs_make_deferred(&m->kernels[0], b, 3, NULL, &in, &e), KF_OK);
    assert_null(in.host[0]);
    assert_int_equal(in.elems[0], 1000000);
    assert_int_equal(in.gens[0].kind, KF_FILL_RAND);
    assert_int_equal(in.gens[0].seed, 3);
    assert_int_equal(in.gens[1].kind, KF_FILL_ZEROS);
    assert_int_equal(in.gens[2].count, 0);   /* a value, not a generator */
    uint64_t v = 0;
    assert_int_equal(kf_cli_scalar_u64(&m->kernels[0], &in, "n", 1, &v, &e), 1);
    assert_int_equal(v, 5);
    assert_int_equal(kf_cli_scalar_u64(&m->kernels[0], &in, "x", 1, &v, &e), 0);
    kf_cli_inputs_free(&in);
    kf_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rand_repeats_its_first_tile_to_an_odd_end),
        cmocka_unit_test(test_iota_is_exact_and_zeros_stay_zero),
        cmocka_unit_test(test_deferred_binding_keeps_generators_off_the_host),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
