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

// C rows (MR x NR, row stride c_stride) = (accumulate ? C : 0) + sum over p of a[p][:] outer b[p * b_stride][:NR]:
// the register tile, written where it belongs (C, or a tile buffer for a partial tile).
static void micro_kernel_into(int depth, const float *a, const float *b, long b_stride, float *c, long c_stride,
                              int accumulate) {
#if defined(__AVX2__) && defined(__FMA__)
  __m256 acc[MR][2];
  for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (int p = 0; p < depth; p++) {
    __m256 b0 = _mm256_loadu_ps(b);
    __m256 b1 = _mm256_loadu_ps(b + 8);
    for (int i = 0; i < MR; i++) {
      __m256 ai = _mm256_broadcast_ss(a + i);
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
    }
    a += MR;
    b += b_stride;
  }
  for (int i = 0; i < MR; i++) {
    float *row = c + i * c_stride;
    if (accumulate) {
      acc[i][0] = _mm256_add_ps(acc[i][0], _mm256_loadu_ps(row));
      acc[i][1] = _mm256_add_ps(acc[i][1], _mm256_loadu_ps(row + 8));
    }
    _mm256_storeu_ps(row, acc[i][0]);
    _mm256_storeu_ps(row + 8, acc[i][1]);
  }
#else
  float acc[MR * NR] = {0};
  for (int p = 0; p < depth; p++) {
    for (int i = 0; i < MR; i++)
      for (int j = 0; j < NR; j++) acc[i * NR + j] += a[i] * b[j];
    a += MR;
    b += b_stride;
  }
  for (int i = 0; i < MR; i++)
    for (int j = 0; j < NR; j++) c[i * c_stride + j] = (accumulate ? c[i * c_stride + j] : 0.f) + acc[i * NR + j];
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

// scores[s] = q . keys[s] for s < n: keys are rows of d floats, `stride` floats apart.
static void key_scores(const float *q, const float *keys, long n, long d, long stride, float *scores) {
  long s = 0;
#if defined(__AVX2__) && defined(__FMA__)
  if (d % 8 == 0) {
    // four keys at a time, each with its own accumulator: no horizontal sum inside the loop over d
    for (; s + 4 <= n; s += 4) {
      const float *k0 = keys + s * stride;
      __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
      for (long j = 0; j < d; j += 8) {
        __m256 qj = _mm256_loadu_ps(q + j);
        a0 = _mm256_fmadd_ps(qj, _mm256_loadu_ps(k0 + j), a0);
        a1 = _mm256_fmadd_ps(qj, _mm256_loadu_ps(k0 + stride + j), a1);
        a2 = _mm256_fmadd_ps(qj, _mm256_loadu_ps(k0 + 2 * stride + j), a2);
        a3 = _mm256_fmadd_ps(qj, _mm256_loadu_ps(k0 + 3 * stride + j), a3);
      }
      __m256 pairs = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
      _mm_storeu_ps(scores + s, _mm_add_ps(_mm256_castps256_ps128(pairs), _mm256_extractf128_ps(pairs, 1)));
    }
  }
#endif
  for (; s < n; s++) scores[s] = dot(q, 1, keys + s * stride, (int)d);
}

// out[j] (+)= sum over s < n of w[s * w_stride] rows[s][j]: rows of d floats, `stride` floats apart; the sums stay
// in registers; `accumulate` adds them to out instead of writing them.
static void weighted_rows(const float *w, long w_stride, const float *rows, long n, long d, long stride, float *out,
                          int accumulate) {
  long j = 0;
#if defined(__AVX2__) && defined(__FMA__)
  for (; j + 32 <= d; j += 32) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (long s = 0; s < n; s++) {
      const __m256 ws = _mm256_broadcast_ss(w + s * w_stride);
      const float *v = rows + s * stride + j;
      a0 = _mm256_fmadd_ps(ws, _mm256_loadu_ps(v), a0);
      a1 = _mm256_fmadd_ps(ws, _mm256_loadu_ps(v + 8), a1);
      a2 = _mm256_fmadd_ps(ws, _mm256_loadu_ps(v + 16), a2);
      a3 = _mm256_fmadd_ps(ws, _mm256_loadu_ps(v + 24), a3);
    }
    if (accumulate) {
      a0 = _mm256_add_ps(a0, _mm256_loadu_ps(out + j));
      a1 = _mm256_add_ps(a1, _mm256_loadu_ps(out + j + 8));
      a2 = _mm256_add_ps(a2, _mm256_loadu_ps(out + j + 16));
      a3 = _mm256_add_ps(a3, _mm256_loadu_ps(out + j + 24));
    }
    _mm256_storeu_ps(out + j, a0);
    _mm256_storeu_ps(out + j + 8, a1);
    _mm256_storeu_ps(out + j + 16, a2);
    _mm256_storeu_ps(out + j + 24, a3);
  }
  for (; j + 8 <= d; j += 8) {
    __m256 a = accumulate ? _mm256_loadu_ps(out + j) : _mm256_setzero_ps();
    for (long s = 0; s < n; s++)
      a = _mm256_fmadd_ps(_mm256_broadcast_ss(w + s * w_stride), _mm256_loadu_ps(rows + s * stride + j), a);
    _mm256_storeu_ps(out + j, a);
  }
#endif
  for (; j < d; j++) {
    float a = accumulate ? out[j] : 0.f;
    for (long s = 0; s < n; s++) a += w[s * w_stride] * rows[s * stride + j];
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
          float *out = c + (long)(i0 + i1) * n + j0;
          if (h == MR && w == NR) {
            micro_kernel_into(kc, pa + (long)(i1 / MR) * kc * MR, bs, b_stride, out, n, accumulate);
            continue;
          }
          micro_kernel_into(kc, pa + (long)(i1 / MR) * kc * MR, bs, b_stride, tile, NR, 0);
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
          float *out = c + (long)(i0 + i1) * n + j0;
          if (h == MR && w == NR) {
            micro_kernel_into(kc, pa + (long)(i1 / MR) * kc * MR, bs, NR, out, n, accumulate);
            continue;
          }
          micro_kernel_into(kc, pa + (long)(i1 / MR) * kc * MR, bs, NR, tile, NR, 0);
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
  size_t i = 0;
#if defined(__AVX2__) && defined(__FMA__)
  const __m256 one = _mm256_set1_ps(1.f);
  for (; i + 8 <= len[0]; i += 8) {
    __m256 gi = _mm256_loadu_ps(g + i);
    __m256 s = _mm256_div_ps(one, _mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), gi))));
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(gi, s), _mm256_loadu_ps(u + i)));
  }
#endif
  for (; i < len[0]; i++) y[i] = g[i] / (1.f + expf(-g[i])) * u[i];
  return NULL;
}

// swiGluGrad(dy, gate, up, dGate, dUp): dGate = dy up s (1 + g (1 - s)) with s = sigmoid(g); dUp = dy silu(g).
static napi_value swi_glu_grad(napi_env env, napi_callback_info info) {
  float *v[5];
  size_t len[5];
  if (!read_args(env, info, "swiGluGrad", 5, v, len, 0, NULL)) return NULL;
  const float *dy = v[0], *g = v[1], *u = v[2];
  float *dg = v[3], *du = v[4];
  size_t i = 0;
#if defined(__AVX2__) && defined(__FMA__)
  const __m256 one = _mm256_set1_ps(1.f);
  for (; i + 8 <= len[1]; i += 8) {
    __m256 gi = _mm256_loadu_ps(g + i), dyi = _mm256_loadu_ps(dy + i);
    __m256 s = _mm256_div_ps(one, _mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), gi))));
    __m256 ds = _mm256_fmadd_ps(gi, _mm256_sub_ps(one, s), one); // 1 + g (1 - s)
    _mm256_storeu_ps(dg + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(dyi, _mm256_loadu_ps(u + i)), s), ds));
    _mm256_storeu_ps(du + i, _mm256_mul_ps(_mm256_mul_ps(dyi, gi), s));
  }
#endif
  for (; i < len[1]; i++) {
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

// An additive mask entry at or below this masks its position: the engine's masks hold 0 and -1e9, and a
// probability of exp(score - 1e9 - max) is exactly zero in single precision.
#define MASKED (-1e8f)

// Positions [0, n) of a mask row that attention must compute: the row's last unmasked position and those before
// it (every later one is masked, so its probability is exactly zero); all n when every position is masked, as
// softmax then spreads the row over all of them.
static long unmasked_length(const float *mask_row, long n) {
  long m = n;
  while (m > 0 && mask_row[m - 1] <= MASKED) m--;
  return m > 0 ? m : n;
}

// The unmasked length of every row of a [T, T] mask, into lengths.
static void unmasked_lengths(const float *mask, long T, long *lengths) {
  for (long t = 0; t < T; t++) lengths[t] = unmasked_length(mask + t * T, T);
}

// Reads the sizes B, T, H, K, D of attention's operands: q [B, T, H, D], k and v [B, T, K, D], probs [B, H, T, T]; false (with a thrown error) when they do not fit.
static int attention_sizes(napi_env env, const char *name, const double *num, const size_t *len, long *sizes) {
  const long B = (long)num[0], T = (long)num[1], H = (long)num[2], K = (long)num[3], D = (long)num[4];
  if (B <= 0 || T <= 0 || H <= 0 || K <= 0 || D <= 0 || H % K) {
    napi_throw_range_error(env, NULL, name);
    return 0;
  }
  if ((size_t)(B * T * H * D) > len[0] || (size_t)(B * T * K * D) > len[1] || (size_t)(B * T * K * D) > len[2] ||
      (size_t)(B * H * T * T) > len[3]) {
    napi_throw_range_error(env, NULL, name);
    return 0;
  }
  sizes[0] = B, sizes[1] = T, sizes[2] = H, sizes[3] = K, sizes[4] = D;
  return 1;
}

// attend(q, k, v, probs, mask, out, B, T, H, K, D): training's attention over its own T positions. probs
// [B, H, T, T] = softmax(q k^T + mask) (kept for the gradient), out [B, T, H, D] = probs v; query head h reads kv
// head h / (H / K). The mask is [B, T, T], or [T, T] for every row.
static napi_value attend(napi_env env, napi_callback_info info) {
  float *v[6];
  size_t len[6];
  double num[5];
  long z[5];
  if (!read_args(env, info, "attend", 6, v, len, 5, num)) return NULL;
  if (!attention_sizes(env, "attend: bad sizes, or an operand shorter than they say", num, len, z)) return NULL;
  const long B = z[0], T = z[1], H = z[2], K = z[3], D = z[4], group = H / K;
  const float *q = v[0], *k = v[1], *vv = v[2], *mask = v[4];
  float *probs = v[3], *out = v[5];
  if ((size_t)(T * T) > len[4] || (size_t)(B * T * H * D) > len[5])
    return napi_throw_range_error(env, NULL, "attend: mask or output shorter than the sizes say"), NULL;
  const long mask_batch_stride = (size_t)(B * T * T) <= len[4] ? T * T : 0; // a [1, 1, T, T] mask serves every row
  long *lengths = (long *)packing_space(&mixed_space, sizeof(long) * (size_t)T);
  if (!lengths) return napi_throw_error(env, NULL, "attend: out of memory for scratch buffers"), NULL;
  for (long b = 0; b < B; b++) {
    const float *mb = mask + b * mask_batch_stride;
    if (b == 0 || mask_batch_stride) unmasked_lengths(mb, T, lengths);
    for (long h = 0; h < H; h++) {
      const long kh = h / group;
      const float *keys = k + (b * T * K + kh) * D, *values = vv + (b * T * K + kh) * D;
      for (long t = 0; t < T; t++) {
        float *row = probs + ((b * H + h) * T + t) * T;
        const long n = lengths[t];
        key_scores(q + ((b * T + t) * H + h) * D, keys, n, D, K * D, row);
        for (long s = 0; s < n; s++) row[s] += mb[t * T + s];
        softmax_row(row, n);
        memset(row + n, 0, sizeof(float) * (size_t)(T - n));
        weighted_rows(row, 1, values, n, D, K * D, out + ((b * T + t) * H + h) * D, 0);
      }
    }
  }
  return NULL;
}

// attendGrad(dy, q, k, v, probs, mask, dq, dk, dv, B, T, H, K, D): the gradient of attend with respect to q, k
// and v, with dScores = probs (dProbs - rowsum(dProbs probs)) and dProbs = dy v^T.
static napi_value attend_grad(napi_env env, napi_callback_info info) {
  float *v[9];
  size_t len[9];
  double num[5];
  long z[5];
  if (!read_args(env, info, "attendGrad", 9, v, len, 5, num)) return NULL;
  if (!attention_sizes(env, "attendGrad: bad sizes, or an operand shorter than they say", num, len + 1, z))
    return NULL;
  const long B = z[0], T = z[1], H = z[2], K = z[3], D = z[4], group = H / K;
  const float *dy = v[0], *q = v[1], *k = v[2], *vv = v[3], *probs = v[4], *mask = v[5];
  float *dq = v[6], *dk = v[7], *dv = v[8];
  if ((size_t)(B * T * H * D) > len[0] || (size_t)(T * T) > len[5] || (size_t)(B * T * H * D) > len[6] ||
      (size_t)(B * T * K * D) > len[7] || (size_t)(B * T * K * D) > len[8])
    return napi_throw_range_error(env, NULL, "attendGrad: mask or a gradient shorter than the sizes say"), NULL;
  const long mask_batch_stride = (size_t)(B * T * T) <= len[5] ? T * T : 0;
  float *ds = packing_space(&scores_space, sizeof(float) * (size_t)(T * T));
  long *lengths = (long *)packing_space(&mixed_space, sizeof(long) * (size_t)(2 * T)), *firsts = lengths + T;
  if (!ds || !lengths) return napi_throw_error(env, NULL, "attendGrad: out of memory for scratch buffers"), NULL;
  memset(dk, 0, sizeof(float) * (size_t)(B * T * K * D));
  memset(dv, 0, sizeof(float) * (size_t)(B * T * K * D));
  for (long b = 0; b < B; b++) {
    // Masked positions past a row's unmasked length (causal attention's later ones) have probability zero and
    // add nothing to any gradient: each row's products stop at its length, and each column's start at the
    // first row that reaches it.
    if (b == 0 || mask_batch_stride) {
      unmasked_lengths(mask + b * mask_batch_stride, T, lengths);
      for (long s = 0; s < T; s++) {
        long t = 0;
        while (t < T && lengths[t] <= s) t++;
        firsts[s] = t;
      }
    }
    for (long h = 0; h < H; h++) {
      const long kh = h / group;
      const float *keys = k + (b * T * K + kh) * D, *values = vv + (b * T * K + kh) * D;
      const float *p = probs + (b * H + h) * T * T, *dyh = dy + (b * T * H + h) * D, *qh = q + (b * T * H + h) * D;
      for (long t = 0; t < T; t++) {
        float *row = ds + t * T;
        const float *pr = p + t * T;
        const long n = lengths[t];
        key_scores(dyh + t * H * D, values, n, D, K * D, row); // dProbs[t, :n]
        float mean = 0.f;
        for (long s = 0; s < n; s++) mean += row[s] * pr[s];
        for (long s = 0; s < n; s++) row[s] = pr[s] * (row[s] - mean);
        memset(row + n, 0, sizeof(float) * (size_t)(T - n));
        weighted_rows(row, 1, keys, n, D, K * D, dq + ((b * T + t) * H + h) * D, 0);
      }
      for (long s = 0; s < T; s++) {
        const long t0 = firsts[s];
        // column s of dScores and probs weigh the rows of q and dy
        weighted_rows(ds + t0 * T + s, T, qh + t0 * H * D, T - t0, D, H * D, dk + ((b * T + s) * K + kh) * D, 1);
        weighted_rows(p + t0 * T + s, T, dyh + t0 * H * D, T - t0, D, H * D, dv + ((b * T + s) * K + kh) * D, 1);
      }
    }
  }
  return NULL;
}

// log-sum-exp of row[0..n) and, through `max`, the row's maximum.
static float log_sum_exp(const float *row, long n, float *max) {
  float top = -INFINITY;
  for (long j = 0; j < n; j++) top = row[j] > top ? row[j] : top;
  float sum = 0.f;
  long j = 0;
#if defined(__AVX2__) && defined(__FMA__)
  __m256 acc = _mm256_setzero_ps();
  const __m256 shift = _mm256_set1_ps(top);
  for (; j + 8 <= n; j += 8) acc = _mm256_add_ps(acc, exp8(_mm256_sub_ps(_mm256_loadu_ps(row + j), shift)));
  sum = hsum8(acc);
#endif
  for (; j < n; j++) sum += expf(row[j] - top);
  *max = top;
  return top + logf(sum);
}

// out[j] = exp(row[j] - lse) for j < n: the probabilities of a row whose log-sum-exp is lse.
static void probabilities(const float *row, float lse, long n, float *out) {
  long j = 0;
#if defined(__AVX2__) && defined(__FMA__)
  const __m256 shift = _mm256_set1_ps(lse);
  for (; j + 8 <= n; j += 8) _mm256_storeu_ps(out + j, exp8(_mm256_sub_ps(_mm256_loadu_ps(row + j), shift)));
#endif
  for (; j < n; j++) out[j] = expf(row[j] - lse);
}

// Reads the sizes B, L, V of next-token log-probs: logits [B, L, V] and per-row values [B, L - 1].
static int next_token_sizes(napi_env env, const char *name, const double *num, size_t logits, size_t per_row,
                            long *B, long *L, long *V) {
  *B = (long)num[0], *L = (long)num[1], *V = (long)num[2];
  if (*B <= 0 || *L < 2 || *V <= 0 || (size_t)(*B * *L * *V) > logits || (size_t)(*B * (*L - 1)) > per_row) {
    napi_throw_range_error(env, NULL, name);
    return 0;
  }
  return 1;
}

// tokenLogprobs(logits, targets, logp, B, L, V): logp[b, t] = log softmax(logits[b, t])[targets[b, t]] for
// t < L - 1 (the next token's log-prob); targets [B, L - 1] hold token ids as floats.
static napi_value token_logprobs(napi_env env, napi_callback_info info) {
  float *v[3];
  size_t len[3];
  double num[3];
  long B, L, V;
  if (!read_args(env, info, "tokenLogprobs", 3, v, len, 3, num)) return NULL;
  if (!next_token_sizes(env, "tokenLogprobs: bad sizes, or an operand shorter than they say", num, len[0],
                        len[1] < len[2] ? len[1] : len[2], &B, &L, &V))
    return NULL;
  for (long b = 0; b < B; b++)
    for (long t = 0; t < L - 1; t++) {
      const float *row = v[0] + (b * L + t) * V;
      const long target = (long)v[1][b * (L - 1) + t];
      if (target < 0 || target >= V) return napi_throw_range_error(env, NULL, "tokenLogprobs: a target is not a token id"), NULL;
      float top;
      v[2][b * (L - 1) + t] = row[target] - log_sum_exp(row, V, &top);
    }
  return NULL;
}

// tokenLogprobsGrad(dlogp, logits, targets, dlogits, B, L, V): dlogits[b, t] = dlogp[b, t] (onehot(target) -
// softmax(logits[b, t])) for t < L - 1, and zero at the last position.
static napi_value token_logprobs_grad(napi_env env, napi_callback_info info) {
  float *v[4];
  size_t len[4];
  double num[3];
  long B, L, V;
  if (!read_args(env, info, "tokenLogprobsGrad", 4, v, len, 3, num)) return NULL;
  if (!next_token_sizes(env, "tokenLogprobsGrad: bad sizes, or an operand shorter than they say", num,
                        len[1] < len[3] ? len[1] : len[3], len[0] < len[2] ? len[0] : len[2], &B, &L, &V))
    return NULL;
  for (long b = 0; b < B; b++) {
    for (long t = 0; t < L - 1; t++) {
      const float *row = v[1] + (b * L + t) * V;
      float *out = v[3] + (b * L + t) * V;
      const long target = (long)v[2][b * (L - 1) + t];
      if (target < 0 || target >= V) return napi_throw_range_error(env, NULL, "tokenLogprobsGrad: a target is not a token id"), NULL;
      float top;
      const float lse = log_sum_exp(row, V, &top), g = v[0][b * (L - 1) + t];
      probabilities(row, lse, V, out);
      for (long j = 0; j < V; j++) out[j] *= -g;
      out[target] += g;
    }
    memset(v[3] + (b * L + L - 1) * V, 0, sizeof(float) * (size_t)V);
  }
  return NULL;
}

// tokenEntropy(logits, entropy, B, L, V): entropy[b, t] = -sum p log p of softmax(logits[b, t]), t < L - 1.
static napi_value token_entropy(napi_env env, napi_callback_info info) {
  float *v[2];
  size_t len[2];
  double num[3];
  long B, L, V;
  if (!read_args(env, info, "tokenEntropy", 2, v, len, 3, num)) return NULL;
  if (!next_token_sizes(env, "tokenEntropy: bad sizes, or an operand shorter than they say", num, len[0], len[1],
                        &B, &L, &V))
    return NULL;
  for (long b = 0; b < B; b++)
    for (long t = 0; t < L - 1; t++) {
      const float *row = v[0] + (b * L + t) * V;
      float top;
      const float lse = log_sum_exp(row, V, &top);
      float h = 0.f;
      for (long j = 0; j < V; j++) h -= expf(row[j] - lse) * (row[j] - lse);
      v[1][b * (L - 1) + t] = h;
    }
  return NULL;
}

// tokenEntropyGrad(dentropy, logits, dlogits, B, L, V): dlogits[b, t, j] = -dentropy[b, t] p_j (log p_j + H)
// for t < L - 1, and zero at the last position.
static napi_value token_entropy_grad(napi_env env, napi_callback_info info) {
  float *v[3];
  size_t len[3];
  double num[3];
  long B, L, V;
  if (!read_args(env, info, "tokenEntropyGrad", 3, v, len, 3, num)) return NULL;
  if (!next_token_sizes(env, "tokenEntropyGrad: bad sizes, or an operand shorter than they say", num,
                        len[1] < len[2] ? len[1] : len[2], len[0], &B, &L, &V))
    return NULL;
  for (long b = 0; b < B; b++) {
    for (long t = 0; t < L - 1; t++) {
      const float *row = v[1] + (b * L + t) * V;
      float *out = v[2] + (b * L + t) * V;
      float top;
      const float lse = log_sum_exp(row, V, &top);
      probabilities(row, lse, V, out);
      float h = 0.f;
      for (long j = 0; j < V; j++) h -= out[j] * (row[j] - lse);
      const float g = v[0][b * (L - 1) + t];
      for (long j = 0; j < V; j++) out[j] = -g * out[j] * (row[j] - lse + h);
    }
    memset(v[2] + (b * L + L - 1) * V, 0, sizeof(float) * (size_t)V);
  }
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
          for (long t = 0; t < T; t++) key_scores(q + ((b * T + t) * H + h) * D, keys, S, D, D, scores + t * S);
        else
          gemm((int)T, (int)S, (int)D, q + (b * T * H + h) * D, H * D, 1, keys, 1, D, scores, pa, pb);
        for (long t = 0; t < T; t++) {
          float *row = scores + t * S;
          const float *m = mask + (b * T + t) * S;
          for (long s = 0; s < S; s++) row[s] += m[s];
          softmax_row(row, S);
        }
        if (T < MR)
          for (long t = 0; t < T; t++)
            weighted_rows(scores + t * S, 1, values, S, D, D, out + ((b * T + t) * H + h) * D, 0);
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
                   {"attendCached", attend_cached}, {"attend", attend}, {"attendGrad", attend_grad},
                   {"tokenLogprobs", token_logprobs}, {"tokenLogprobsGrad", token_logprobs_grad},
                   {"tokenEntropy", token_entropy}, {"tokenEntropyGrad", token_entropy_grad}};
  for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++) {
    napi_value fn;
    napi_create_function(env, functions[i].name, NAPI_AUTO_LENGTH, functions[i].fn, NULL, &fn);
    napi_set_named_property(env, exports, functions[i].name, fn);
  }
  return exports;
}
