// The embedded engine's native kernels, as a Node-API addon. Single-precision matrix products C = A B over a
// batch, with either operand transposed: packed panels and a 6x16 register tile (AVX2 + FMA where the compiler
// targets them, plain C otherwise), one thread, as the engine already runs one trainer per core; and products
// with a right operand packed once (decoding's weights). The element-wise layers of a Llama block with their
// gradients (RMSNorm, SwiGLU, rotary embeddings), each in one pass where tensorflow.js would run 6-20 small
// kernels. And inference's attention over a KV cache that it writes in place.
#include <node_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

#define MR 6
#define NR 16
#define KC 256
#define MC 96
// Up to this many rows of A, a row-major B is not packed (see gemm).
#define DIRECT_B_MAX_ROWS 24

// A (rows x depth) read through strides into MR-row slivers: out[s][p][i], zero-padded past the last row.
static void pack_a(const float *a, long rs, long cs, int rows, int depth, float *out) {
  for (int i0 = 0; i0 < rows; i0 += MR) {
    int h = rows - i0 < MR ? rows - i0 : MR;
    for (int p = 0; p < depth; p++) {
      for (int i = 0; i < h; i++) out[i] = a[(long)(i0 + i) * rs + (long)p * cs];
      for (int i = h; i < MR; i++) out[i] = 0.f;
      out += MR;
    }
  }
}

// B (depth x cols) read through strides into NR-column slivers: out[s][p][j], zero-padded past the last column.
static void pack_b(const float *b, long rs, long cs, int depth, int cols, float *out) {
  for (int j0 = 0; j0 < cols; j0 += NR) {
    int w = cols - j0 < NR ? cols - j0 : NR;
    for (int p = 0; p < depth; p++) {
      const float *row = b + (long)p * rs + (long)j0 * cs;
      if (cs == 1 && w == NR) {
        memcpy(out, row, NR * sizeof(float));
      } else {
        for (int j = 0; j < w; j++) out[j] = row[(long)j * cs];
        for (int j = w; j < NR; j++) out[j] = 0.f;
      }
      out += NR;
    }
  }
}

// tile (MR x NR, row stride NR) = sum over p of a[p][:] outer b[p * b_stride][:NR]; overwrites the tile.
static void micro_kernel(int depth, const float *a, const float *b, long b_stride, float *tile) {
#if defined(__AVX2__) && defined(__FMA__)
  __m256 c[MR][2];
  for (int i = 0; i < MR; i++) c[i][0] = c[i][1] = _mm256_setzero_ps();
  for (int p = 0; p < depth; p++) {
    __m256 b0 = _mm256_loadu_ps(b);
    __m256 b1 = _mm256_loadu_ps(b + 8);
    for (int i = 0; i < MR; i++) {
      __m256 ai = _mm256_broadcast_ss(a + i);
      c[i][0] = _mm256_fmadd_ps(ai, b0, c[i][0]);
      c[i][1] = _mm256_fmadd_ps(ai, b1, c[i][1]);
    }
    a += MR;
    b += b_stride;
  }
  for (int i = 0; i < MR; i++) {
    _mm256_storeu_ps(tile + i * NR, c[i][0]);
    _mm256_storeu_ps(tile + i * NR + 8, c[i][1]);
  }
#else
  float c[MR * NR] = {0};
  for (int p = 0; p < depth; p++) {
    for (int i = 0; i < MR; i++)
      for (int j = 0; j < NR; j++) c[i * NR + j] += a[i] * b[j];
    a += MR;
    b += b_stride;
  }
  memcpy(tile, c, sizeof c);
#endif
}

// sum over p < k of x[p * x_stride] y[p].
static float dot(const float *x, long x_stride, const float *y, int k) {
  int p = 0;
  float sum = 0.f;
#if defined(__AVX2__) && defined(__FMA__)
  if (x_stride == 1 && k >= 8) {
    __m256 acc = _mm256_setzero_ps();
    for (; p + 8 <= k; p += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(x + p), _mm256_loadu_ps(y + p), acc);
    __m128 half = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
    half = _mm_add_ps(half, _mm_movehl_ps(half, half));
    half = _mm_add_ss(half, _mm_movehdup_ps(half));
    sum = _mm_cvtss_f32(half);
  }
#endif
  for (; p < k; p++) sum += x[(long)p * x_stride] * y[p];
  return sum;
}

#if defined(__AVX2__) && defined(__FMA__)
// exp(x) for 8 lanes: 2^n e^r with n = round(x / ln 2) and a degree-6 polynomial for e^r on |r| <= ln(2)/2
// (relative error about 2e-7); inputs below -87 give 0, as they would underflow.
static __m256 exp8(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.3f);
  __m256 clamped = _mm256_min_ps(_mm256_max_ps(x, lo), _mm256_set1_ps(88.3f));
  __m256 n = _mm256_round_ps(_mm256_mul_ps(clamped, _mm256_set1_ps(1.44269504f)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), clamped);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.f)));
  __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  __m256 result = _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
  return _mm256_and_ps(result, _mm256_cmp_ps(x, lo, _CMP_GE_OQ));
}

// Sum of the 8 lanes.
static float hsum8(__m256 v) {
  __m128 half = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  half = _mm_add_ps(half, _mm_movehl_ps(half, half));
  return _mm_cvtss_f32(_mm_add_ss(half, _mm_movehdup_ps(half)));
}
#endif

// row[s] = exp(row[s] - max) / sum over s < n: a softmax in place.
static void softmax_row(float *row, long n) {
  float top = -INFINITY;
  for (long s = 0; s < n; s++) top = row[s] > top ? row[s] : top;
  long s = 0;
  float sum = 0.f;
#if defined(__AVX2__) && defined(__FMA__)
  __m256 acc = _mm256_setzero_ps();
  const __m256 shift = _mm256_set1_ps(top);
  for (; s + 8 <= n; s += 8) {
    __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(row + s), shift));
    _mm256_storeu_ps(row + s, e);
    acc = _mm256_add_ps(acc, e);
  }
  sum = hsum8(acc);
#endif
  for (; s < n; s++) sum += row[s] = expf(row[s] - top);
  const float scale = 1.f / sum;
  for (s = 0; s < n; s++) row[s] *= scale;
}

// scores[s] = q . keys[s] for s < n, keys rows of d floats.
static void key_scores(const float *q, const float *keys, long n, long d, float *scores) {
  long s = 0;
#if defined(__AVX2__) && defined(__FMA__)
  if (d % 8 == 0) {
    // four keys at a time, each with its own accumulator: no horizontal sum inside the loop over d
    for (; s + 4 <= n; s += 4) {
      const float *k0 = keys + s * d;
      __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
      for (long j = 0; j < d; j += 8) {
        __m256 qj = _mm256_loadu_ps(q + j);
        a0 = _mm256_fmadd_ps(qj, _mm256_loadu_ps(k0 + j), a0);
        a1 = _mm256_fmadd_ps(qj, _mm256_loadu_ps(k0 + d + j), a1);
        a2 = _mm256_fmadd_ps(qj, _mm256_loadu_ps(k0 + 2 * d + j), a2);
        a3 = _mm256_fmadd_ps(qj, _mm256_loadu_ps(k0 + 3 * d + j), a3);
      }
      __m256 pairs = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
      _mm_storeu_ps(scores + s, _mm_add_ps(_mm256_castps256_ps128(pairs), _mm256_extractf128_ps(pairs, 1)));
    }
  }
#endif
  for (; s < n; s++) scores[s] = dot(q, 1, keys + s * d, (int)d);
}

// out[j] = sum over s < n of w[s] values[s][j], values rows of d floats; the sums stay in registers.
static void weighted_rows(const float *w, const float *values, long n, long d, float *out) {
  long j = 0;
#if defined(__AVX2__) && defined(__FMA__)
  for (; j + 32 <= d; j += 32) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (long s = 0; s < n; s++) {
      const __m256 ws = _mm256_broadcast_ss(w + s);
      const float *v = values + s * d + j;
      a0 = _mm256_fmadd_ps(ws, _mm256_loadu_ps(v), a0);
      a1 = _mm256_fmadd_ps(ws, _mm256_loadu_ps(v + 8), a1);
      a2 = _mm256_fmadd_ps(ws, _mm256_loadu_ps(v + 16), a2);
      a3 = _mm256_fmadd_ps(ws, _mm256_loadu_ps(v + 24), a3);
    }
    _mm256_storeu_ps(out + j, a0);
    _mm256_storeu_ps(out + j + 8, a1);
    _mm256_storeu_ps(out + j + 16, a2);
    _mm256_storeu_ps(out + j + 24, a3);
  }
  for (; j + 8 <= d; j += 8) {
    __m256 a = _mm256_setzero_ps();
    for (long s = 0; s < n; s++) a = _mm256_fmadd_ps(_mm256_broadcast_ss(w + s), _mm256_loadu_ps(values + s * d + j), a);
    _mm256_storeu_ps(out + j, a);
  }
#endif
  for (; j < d; j++) {
    float a = 0.f;
    for (long s = 0; s < n; s++) a += w[s] * values[s * d + j];
    out[j] = a;
  }
}

// C (m x n, row-major) = A B, with A and B read through (row, column) strides; pa and pb are packing space.
static void gemm(int m, int n, int k, const float *a, long ars, long acs, const float *b, long brs, long bcs,
                 float *c, float *pa, float *pb) {
  float tile[MR * NR];
  if (k == 0) {
    memset(c, 0, sizeof(float) * (size_t)m * (size_t)n);
    return;
  }
  if (m < MR && brs == 1) {
    // A few rows against a transposed B (decoding's q k^T): each output is a dot product of two contiguous rows.
    for (int i = 0; i < m; i++) {
      const float *ai = a + (long)i * ars;
      for (int j = 0; j < n; j++) c[(long)i * n + j] = dot(ai, acs, b + (long)j * bcs, k);
    }
    return;
  }
  if (m < MR && bcs == 1) {
    // A few rows (decoding): packing B would cost as much as the product, so rows of B are added in place.
    for (int i = 0; i < m; i++) {
      float *row = c + (long)i * n;
      memset(row, 0, sizeof(float) * (size_t)n);
      for (int p = 0; p < k; p++) {
        const float ai = a[(long)i * ars + (long)p * acs];
        const float *bp = b + (long)p * brs;
        for (int j = 0; j < n; j++) row[j] += ai * bp[j];
      }
    }
    return;
  }
  for (int p0 = 0; p0 < k; p0 += KC) {
    int kc = k - p0 < KC ? k - p0 : KC;
    int accumulate = p0 > 0;
    // With few rows B is read in place (row-major B only) but for its last, partial sliver: packing all of it
    // would cost more memory traffic than the product saves.
    const int direct = bcs == 1 && m <= DIRECT_B_MAX_ROWS;
    const float *b0 = b + (long)p0 * brs;
    if (!direct) pack_b(b0, brs, bcs, kc, n, pb);
    else if (n % NR) pack_b(b0 + (n / NR) * NR, brs, bcs, kc, n % NR, pb);
    for (int i0 = 0; i0 < m; i0 += MC) {
      int mc = m - i0 < MC ? m - i0 : MC;
      pack_a(a + (long)i0 * ars + (long)p0 * acs, ars, acs, mc, kc, pa);
      for (int j0 = 0; j0 < n; j0 += NR) {
        int w = n - j0 < NR ? n - j0 : NR;
        const int in_place = direct && w == NR;
        const float *bs = in_place ? b0 + j0 : direct ? pb : pb + (long)(j0 / NR) * kc * NR;
        const long b_stride = in_place ? brs : NR;
        for (int i1 = 0; i1 < mc; i1 += MR) {
          int h = mc - i1 < MR ? mc - i1 : MR;
          micro_kernel(kc, pa + (long)(i1 / MR) * kc * MR, bs, b_stride, tile);
          float *out = c + (long)(i0 + i1) * n + j0;
          for (int i = 0; i < h; i++) {
            float *row = out + (long)i * n;
            const float *t = tile + i * NR;
            if (accumulate)
              for (int j = 0; j < w; j++) row[j] += t[j];
            else
              memcpy(row, t, (size_t)w * sizeof(float));
          }
        }
      }
    }
  }
}

// C (m x n, row-major) = A B with B pre-packed by pack_panels ([n/NR][k][NR]): B is read in the order it lies, so
// a product whose right operand is not in cache streams it instead of chasing one cache line per row.
static void gemm_packed(int m, int n, int k, const float *a, long ars, const float *bp, float *c, float *pa) {
  float tile[MR * NR];
  for (int p0 = 0; p0 < k; p0 += KC) {
    int kc = k - p0 < KC ? k - p0 : KC;
    int accumulate = p0 > 0;
    for (int i0 = 0; i0 < m; i0 += MC) {
      int mc = m - i0 < MC ? m - i0 : MC;
      pack_a(a + (long)i0 * ars + p0, ars, 1, mc, kc, pa);
      for (int j0 = 0; j0 < n; j0 += NR) {
        int w = n - j0 < NR ? n - j0 : NR;
        const float *bs = bp + (long)(j0 / NR) * k * NR + (long)p0 * NR;
        for (int i1 = 0; i1 < mc; i1 += MR) {
          int h = mc - i1 < MR ? mc - i1 : MR;
          micro_kernel(kc, pa + (long)(i1 / MR) * kc * MR, bs, NR, tile);
          float *out = c + (long)(i0 + i1) * n + j0;
          for (int i = 0; i < h; i++) {
            float *row = out + (long)i * n;
            const float *t = tile + i * NR;
            if (accumulate)
              for (int j = 0; j < w; j++) row[j] += t[j];
            else
              memcpy(row, t, (size_t)w * sizeof(float));
          }
        }
      }
    }
  }
}

// Packing space kept per thread (gradient workers are threads) and grown as needed.
typedef struct {
  float *data;
  size_t bytes;
} space_t;
static _Thread_local space_t pack_a_space, pack_b_space, scores_space, mixed_space;

static float *packing_space(space_t *space, size_t bytes) {
  if (space->bytes < bytes) {
    free(space->data);
    space->data = aligned_alloc(64, (bytes + 63) / 64 * 64);
    space->bytes = space->data ? bytes : 0;
  }
  return space->data;
}

static float *typed_array_data(napi_env env, napi_value value, size_t *length) {
  napi_typedarray_type type;
  void *data;
  if (napi_get_typedarray_info(env, value, &type, length, &data, NULL, NULL) != napi_ok ||
      type != napi_float32_array) {
    napi_throw_type_error(env, NULL, "matMul: operands must be Float32Arrays");
    return NULL;
  }
  return (float *)data;
}

// matMul(a, b, c, batch, m, n, k, transposeA, transposeB, aBatchStride, bBatchStride): for each batch entry,
// c[e] (m x n) = op(a[e]) op(b[e]); a stride of 0 reuses one operand for every entry (broadcast).
static napi_value mat_mul(napi_env env, napi_callback_info info) {
  size_t argc = 11;
  napi_value argv[11];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc != 11) {
    napi_throw_type_error(env, NULL, "matMul: expected 11 arguments");
    return NULL;
  }
  size_t la, lb, lc;
  float *a = typed_array_data(env, argv[0], &la);
  if (!a) return NULL;
  float *b = typed_array_data(env, argv[1], &lb);
  if (!b) return NULL;
  float *c = typed_array_data(env, argv[2], &lc);
  if (!c) return NULL;
  int64_t dims[8];
  for (int i = 0; i < 8; i++) {
    if (napi_get_value_int64(env, argv[3 + i], &dims[i]) != napi_ok || dims[i] < 0) {
      napi_throw_type_error(env, NULL, "matMul: sizes must be non-negative integers");
      return NULL;
    }
  }
  long batch = dims[0], m = dims[1], n = dims[2], k = dims[3];
  int ta = (int)dims[4], tb = (int)dims[5];
  long sa = dims[6], sb = dims[7];
  if ((size_t)(batch * m * n) > lc || (batch > 0 && ((size_t)((batch - 1) * sa + m * k) > la ||
                                                     (size_t)((batch - 1) * sb + k * n) > lb))) {
    napi_throw_range_error(env, NULL, "matMul: an operand is shorter than its sizes say");
    return NULL;
  }
  float *pa = packing_space(&pack_a_space, sizeof(float) * MC * KC);
  float *pb = packing_space(&pack_b_space, sizeof(float) * (size_t)((n + NR - 1) / NR) * NR * KC);
  if (!pa || !pb) {
    napi_throw_error(env, NULL, "matMul: out of memory for packing buffers");
    return NULL;
  }
  for (long e = 0; e < batch; e++) {
    const float *ae = a + e * sa, *be = b + e * sb;
    gemm((int)m, (int)n, (int)k, ae, ta ? 1 : k, ta ? m : 1, be, tb ? 1 : n, tb ? k : 1, c + e * m * n, pa, pb);
  }
  return NULL;
}

// Reads argv[i] as a Float32Array (arrays) or a number (numbers); false with a thrown TypeError when it is not.
static int read_args(napi_env env, napi_callback_info info, const char *name, size_t arrays, float **data,
                     size_t *lengths, size_t numbers, double *values) {
  napi_value argv[16];
  size_t argc = 16;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc != arrays + numbers) {
    char message[96];
    snprintf(message, sizeof message, "%s: expected %zu arguments, got %zu", name, arrays + numbers, argc);
    napi_throw_type_error(env, NULL, message);
    return 0;
  }
  for (size_t i = 0; i < arrays; i++) {
    data[i] = typed_array_data(env, argv[i], &lengths[i]);
    if (!data[i]) return 0;
  }
  for (size_t i = 0; i < numbers; i++) {
    if (napi_get_value_double(env, argv[arrays + i], &values[i]) != napi_ok) {
      napi_throw_type_error(env, NULL, "expected a number");
      return 0;
    }
  }
  return 1;
}

// rmsNorm(x, w, y, inv, d, eps): y = x / sqrt(mean(x^2) + eps) * w per row of d; inv = 1/rms per row.
static napi_value rms_norm(napi_env env, napi_callback_info info) {
  float *v[4];
  size_t len[4];
  double num[2];
  if (!read_args(env, info, "rmsNorm", 4, v, len, 2, num)) return NULL;
  const float *x = v[0], *w = v[1];
  float *y = v[2], *inv = v[3];
  long d = (long)num[0];
  float eps = (float)num[1];
  if (d <= 0) return napi_throw_range_error(env, NULL, "rmsNorm: width must be positive"), NULL;
  for (long r = 0; r * d < (long)len[0]; r++) {
    const float *xr = x + r * d;
    float squares = 0.f;
    for (long j = 0; j < d; j++) squares += xr[j] * xr[j];
    float s = 1.f / sqrtf(squares / (float)d + eps);
    inv[r] = s;
    for (long j = 0; j < d; j++) y[r * d + j] = xr[j] * s * w[j];
  }
  return NULL;
}

// rmsNormGrad(dy, x, w, inv, dx, dw, d): dx = s (dn - n mean(dn n)) with n = x s, dn = dy w; dw = sum_rows dy n.
static napi_value rms_norm_grad(napi_env env, napi_callback_info info) {
  float *v[6];
  size_t len[6];
  double num[1];
  if (!read_args(env, info, "rmsNormGrad", 6, v, len, 1, num)) return NULL;
  const float *dy = v[0], *x = v[1], *w = v[2], *inv = v[3];
  float *dx = v[4], *dw = v[5];
  long d = (long)num[0];
  if (d <= 0) return napi_throw_range_error(env, NULL, "rmsNormGrad: width must be positive"), NULL;
  memset(dw, 0, sizeof(float) * (size_t)d);
  for (long r = 0; r * d < (long)len[1]; r++) {
    const float s = inv[r];
    const float *xr = x + r * d, *dyr = dy + r * d;
    float dot = 0.f;
    for (long j = 0; j < d; j++) dot += dyr[j] * w[j] * xr[j];
    const float mean = dot * s / (float)d;
    for (long j = 0; j < d; j++) {
      const float n = xr[j] * s;
      dx[r * d + j] = s * (dyr[j] * w[j] - n * mean);
      dw[j] += dyr[j] * n;
    }
  }
  return NULL;
}

// swiGlu(gate, up, y): y = silu(gate) up.
static napi_value swi_glu(napi_env env, napi_callback_info info) {
  float *v[3];
  size_t len[3];
  if (!read_args(env, info, "swiGlu", 3, v, len, 0, NULL)) return NULL;
  const float *g = v[0], *u = v[1];
  float *y = v[2];
  for (size_t i = 0; i < len[0]; i++) y[i] = g[i] / (1.f + expf(-g[i])) * u[i];
  return NULL;
}

// swiGluGrad(dy, gate, up, dGate, dUp): dGate = dy up s (1 + g (1 - s)) with s = sigmoid(g); dUp = dy silu(g).
static napi_value swi_glu_grad(napi_env env, napi_callback_info info) {
  float *v[5];
  size_t len[5];
  if (!read_args(env, info, "swiGluGrad", 5, v, len, 0, NULL)) return NULL;
  const float *dy = v[0], *g = v[1], *u = v[2];
  float *dg = v[3], *du = v[4];
  for (size_t i = 0; i < len[1]; i++) {
    const float s = 1.f / (1.f + expf(-g[i]));
    dg[i] = dy[i] * u[i] * s * (1.f + g[i] * (1.f - s));
    du[i] = dy[i] * g[i] * s;
  }
  return NULL;
}

// rope(x, cos, sin, y, heads, D, scale, inverse): x [B*T, heads, D] with cos/sin [B*T, D] (HF rotate-half):
// y1 = x1 c1 - x2 s1, y2 = x2 c2 + x1 s2, times scale; `inverse` applies the transpose (the gradient).
static napi_value rope(napi_env env, napi_callback_info info) {
  float *v[4];
  size_t len[4];
  double num[4];
  if (!read_args(env, info, "rope", 4, v, len, 4, num)) return NULL;
  const float *x = v[0], *cs = v[1], *sn = v[2];
  float *y = v[3];
  const long heads = (long)num[0], D = (long)num[1], half = D / 2;
  const float k = (float)num[2];
  const int inverse = num[3] != 0;
  if (heads <= 0 || D <= 0 || D % 2) return napi_throw_range_error(env, NULL, "rope: bad heads or head width"), NULL;
  for (long bt = 0; bt * heads * D < (long)len[0]; bt++) {
    const float *c1 = cs + bt * D, *c2 = c1 + half, *s1 = sn + bt * D, *s2 = s1 + half;
    for (long h = 0; h < heads; h++) {
      const float *x1 = x + (bt * heads + h) * D, *x2 = x1 + half;
      float *y1 = y + (bt * heads + h) * D, *y2 = y1 + half;
      if (inverse)
        for (long j = 0; j < half; j++) {
          y1[j] = k * (x1[j] * c1[j] + x2[j] * s2[j]);
          y2[j] = k * (x2[j] * c2[j] - x1[j] * s1[j]);
        }
      else
        for (long j = 0; j < half; j++) {
          y1[j] = k * (x1[j] * c1[j] - x2[j] * s1[j]);
          y2[j] = k * (x2[j] * c2[j] + x1[j] * s2[j]);
        }
    }
  }
  return NULL;
}

// Number of floats packPanels writes for a k x n matrix: whole NR-column slivers.
static long packed_length(long k, long n) { return (n + NR - 1) / NR * NR * k; }

// packPanels(b, packed, k, n): the row-major k x n matrix b as NR-column slivers [n/NR][k][NR], zero-padded.
static napi_value pack_panels(napi_env env, napi_callback_info info) {
  float *v[2];
  size_t len[2];
  double num[2];
  if (!read_args(env, info, "packPanels", 2, v, len, 2, num)) return NULL;
  const long k = (long)num[0], n = (long)num[1];
  if (k <= 0 || n <= 0 || (size_t)(k * n) > len[0] || (size_t)packed_length(k, n) > len[1])
    return napi_throw_range_error(env, NULL, "packPanels: an operand is shorter than its sizes say"), NULL;
  pack_b(v[0], n, 1, (int)k, (int)n, v[1]);
  return NULL;
}

// matMulPacked(a, packed, c, m, n, k): c (m x n) = a (m x k, row-major) times the matrix packPanels packed.
static napi_value mat_mul_packed(napi_env env, napi_callback_info info) {
  float *v[3];
  size_t len[3];
  double num[3];
  if (!read_args(env, info, "matMulPacked", 3, v, len, 3, num)) return NULL;
  const long m = (long)num[0], n = (long)num[1], k = (long)num[2];
  if (m < 0 || n <= 0 || k <= 0 || (size_t)(m * k) > len[0] || (size_t)packed_length(k, n) > len[1] ||
      (size_t)(m * n) > len[2])
    return napi_throw_range_error(env, NULL, "matMulPacked: an operand is shorter than its sizes say"), NULL;
  float *pa = packing_space(&pack_a_space, sizeof(float) * MC * KC);
  if (!pa) return napi_throw_error(env, NULL, "matMulPacked: out of memory for packing buffers"), NULL;
  gemm_packed((int)m, (int)n, (int)k, v[0], k, v[1], v[2], pa);
  return NULL;
}

// attendCached(q, k, v, mask, cacheK, cacheV, out, B, T, H, K, D, past, capacity): attention of T new positions
// over a KV cache kept in place. q [B, T, H, D] (scaled, rotated), k and v [B, T, K, D] (k rotated) are written
// into the cache [B, K, capacity, D] at positions past..past+T-1; then for each row, head and new position,
// out [B, T, H, D] = softmax(q k^T + mask) v over the S = past + T cached positions, with the additive mask
// [B, T, S]. Query head h reads kv head h / (H / K) (grouped-query attention).
static napi_value attend_cached(napi_env env, napi_callback_info info) {
  float *v[7];
  size_t len[7];
  double num[7];
  if (!read_args(env, info, "attendCached", 7, v, len, 7, num)) return NULL;
  const float *q = v[0], *kn = v[1], *vn = v[2], *mask = v[3];
  float *ck = v[4], *cv = v[5], *out = v[6];
  const long B = (long)num[0], T = (long)num[1], H = (long)num[2], K = (long)num[3], D = (long)num[4],
             past = (long)num[5], cap = (long)num[6], S = past + T;
  if (B <= 0 || T <= 0 || H <= 0 || K <= 0 || D <= 0 || past < 0 || H % K || S > cap)
    return napi_throw_range_error(env, NULL, "attendCached: bad sizes (or the cache is full)"), NULL;
  if ((size_t)(B * T * H * D) > len[0] || (size_t)(B * T * K * D) > len[1] || (size_t)(B * T * K * D) > len[2] ||
      (size_t)(B * T * S) > len[3] || (size_t)(B * K * cap * D) > len[4] || (size_t)(B * K * cap * D) > len[5] ||
      (size_t)(B * T * H * D) > len[6])
    return napi_throw_range_error(env, NULL, "attendCached: an operand is shorter than its sizes say"), NULL;
  float *scores = packing_space(&scores_space, sizeof(float) * (size_t)(T * S));
  float *mixed = packing_space(&mixed_space, sizeof(float) * (size_t)(T * D));
  float *pa = packing_space(&pack_a_space, sizeof(float) * MC * KC);
  float *pb = packing_space(&pack_b_space, sizeof(float) * (size_t)((S > D ? S : D) + NR) * KC);
  if (!scores || !mixed || !pa || !pb)
    return napi_throw_error(env, NULL, "attendCached: out of memory for scratch buffers"), NULL;
  const long group = H / K;
  for (long b = 0; b < B; b++) {
    for (long kh = 0; kh < K; kh++) {
      float *keys = ck + (b * K + kh) * cap * D, *values = cv + (b * K + kh) * cap * D;
      for (long t = 0; t < T; t++) {
        memcpy(keys + (past + t) * D, kn + ((b * T + t) * K + kh) * D, sizeof(float) * (size_t)D);
        memcpy(values + (past + t) * D, vn + ((b * T + t) * K + kh) * D, sizeof(float) * (size_t)D);
      }
      for (long h = kh * group; h < (kh + 1) * group; h++) {
        // scores [T, S] = q_h [T, D] (rows H*D apart) times keys^T
        // A few new positions (decoding) go key by key; more (prefill) as products of packed panels.
        if (T < MR)
          for (long t = 0; t < T; t++) key_scores(q + ((b * T + t) * H + h) * D, keys, S, D, scores + t * S);
        else
          gemm((int)T, (int)S, (int)D, q + (b * T * H + h) * D, H * D, 1, keys, 1, D, scores, pa, pb);
        for (long t = 0; t < T; t++) {
          float *row = scores + t * S;
          const float *m = mask + (b * T + t) * S;
          for (long s = 0; s < S; s++) row[s] += m[s];
          softmax_row(row, S);
        }
        if (T < MR)
          for (long t = 0; t < T; t++) weighted_rows(scores + t * S, values, S, D, out + ((b * T + t) * H + h) * D);
        else {
          gemm((int)T, (int)D, (int)S, scores, S, 1, values, D, 1, mixed, pa, pb); // [T, D]
          for (long t = 0; t < T; t++)
            memcpy(out + ((b * T + t) * H + h) * D, mixed + t * D, sizeof(float) * (size_t)D);
        }
      }
    }
  }
  return NULL;
}

NAPI_MODULE_INIT() {
  const struct {
    const char *name;
    napi_callback fn;
  } functions[] = {{"matMul", mat_mul},     {"rmsNorm", rms_norm}, {"rmsNormGrad", rms_norm_grad},
                   {"swiGlu", swi_glu},     {"swiGluGrad", swi_glu_grad}, {"rope", rope},
                   {"packPanels", pack_panels}, {"matMulPacked", mat_mul_packed},
                   {"attendCached", attend_cached}};
  for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++) {
    napi_value fn;
    napi_create_function(env, functions[i].name, NAPI_AUTO_LENGTH, functions[i].fn, NULL, &fn);
    napi_set_named_property(env, exports, functions[i].name, fn);
  }
  return exports;
}
