"""The host side of a probe program, shared by the CUDA and HIP targets.

A probe is one source file: a header comment (what it runs, how to build
it), the embedded vectors as raw bits (the user's, then the calibration
vectors of ``tcsmt.probes.calibration``), one kernel (written by
``tcsmt.probes.cuda`` or ``tcsmt.probes.hip``) that runs one vector per
thread block, and a ``main`` that runs them and prints one JSON object of
the observation schema (``tcsmt.observed.observations``). The runtime calls
are written once through ``RT(...)``, which the target defines as
``cuda...`` or ``hip...``.

Every kernel has the signature::

    probe_kernel(const a_word* a, const b_word* b, const acc_word* c,
                 const uint32_t* sa, const uint32_t* sb, acc_word* d,
                 unsigned int* stray)

and runs vector ``blockIdx.x``: K terms of a and b, c, the scale factors of
a and b (NSB per vector, one per 32-bit word, for block-scaled
instructions), writing the bits of D[0][0] to d and counting into stray the
elements of D that break the placement's rule.
"""

from __future__ import annotations

from string import Template

from tcsmt.instructions.instruction import Instruction
from tcsmt.model.formats import Format, get_format
from tcsmt.probes.calibration import calibration_vectors
from tcsmt.version import __version__

DATA = Template("""\
#define NVEC $nvec
#define NCAL $ncal
#define NTOT (NVEC + NCAL)
#define K $k
#define NSB $nsb
#define NHYP $nhyp
#define THREADS $threads
typedef $a_word a_word;
typedef $b_word b_word;
typedef $acc_word acc_word;

// Inputs as storage words: a in $fa, b in $fb, c in $fc; K terms per vector. Vectors
// 0 .. NVEC-1 are the ones asked for, NVEC .. NTOT-1 the calibration vectors.
static const a_word h_a[NTOT * K] = {
$a_data
};
static const b_word h_b[NTOT * K] = {
$b_data
};
static const acc_word h_c[NTOT] = {
$c_data
};
// Scale factors ($fscale), NSB per vector for a and for b (one word for none).
static const uint32_t h_sa[NTOT * (NSB ? NSB : 1)] = {
$sa_data
};
static const uint32_t h_sb[NTOT * (NSB ? NSB : 1)] = {
$sb_data
};
$sparse_data// The exact d of each calibration vector, in $fout.
static const acc_word h_cal_d[NCAL] = {
$cal_data
};
static const char* const h_cal_label[NCAL] = {
$cal_labels
};
// The d each hypothesis expects, per vector.
static const char* const h_hyp_id[NHYP ? NHYP : 1] = {$hyp_ids};
static const char* const h_hyp_label[NHYP ? NHYP : 1] = {$hyp_labels};
static const acc_word h_expect[(NHYP ? NHYP : 1) * NVEC] = {
$expect_data
};

// An output element is "quiet" when it is +-0 or NaN in $fout.
__device__ __forceinline__ bool quiet(acc_word x) {
  return (x & ${abs_mask}ull) == 0 ||
         ((x & ${exp_mask}ull) == ${exp_mask}ull && (x & ${frac_mask}ull) != 0);
}
""")

MAIN = Template(r"""
#include <cstdlib>
#include <cstring>

// the call as text with RT(...) expanded: "cudaGetDevice(&dev)", not "RT(GetDevice)(&dev)"
#define EXPANDED_TEXT_(x) #x
#define EXPANDED_TEXT(x) EXPANDED_TEXT_(x)
#define CHECK(call)                                                              \
  do {                                                                           \
    RT(Error_t) err_ = (call);                                                   \
    if (err_ != RT(Success)) {                                                   \
      fprintf(stderr, "probe: %s failed: %s\n", EXPANDED_TEXT(call),             \
              RT(GetErrorString)(err_));                                         \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

static void print_string(const char* s) {
  putchar('"');
  for (; *s; ++s) {
    const unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') { putchar('\\'); putchar(ch); }
    else if (ch < 0x20) printf("\\u%04x", ch);
    else putchar(ch);
  }
  putchar('"');
}

static void print_hex(unsigned long long x, int digits) { printf("\"0x%0*llx\"", digits, x); }

static void print_list(const unsigned long long* xs, int n, int digits) {
  putchar('[');
  for (int i = 0; i < n; ++i) { if (i) printf(", "); print_hex(xs[i], digits); }
  putchar(']');
}

static acc_word h_d[NTOT];

// Runs every vector; 0 on success.
static int run(unsigned int* stray) {
  a_word* d_a = nullptr; b_word* d_b = nullptr; acc_word *d_c = nullptr, *d_d = nullptr;
  uint32_t *d_sa = nullptr, *d_sb = nullptr;
  unsigned int* d_stray = nullptr;
  CHECK(RT(Malloc)(&d_a, sizeof(h_a)));
  CHECK(RT(Malloc)(&d_b, sizeof(h_b)));
  CHECK(RT(Malloc)(&d_c, sizeof(h_c)));
  CHECK(RT(Malloc)(&d_sa, sizeof(h_sa)));
  CHECK(RT(Malloc)(&d_sb, sizeof(h_sb)));
  CHECK(RT(Malloc)(&d_d, sizeof(h_d)));
  CHECK(RT(Malloc)(&d_stray, sizeof(*stray)));
  CHECK(RT(Memcpy)(d_a, h_a, sizeof(h_a), RT(MemcpyHostToDevice)));
  CHECK(RT(Memcpy)(d_b, h_b, sizeof(h_b), RT(MemcpyHostToDevice)));
  CHECK(RT(Memcpy)(d_c, h_c, sizeof(h_c), RT(MemcpyHostToDevice)));
  CHECK(RT(Memcpy)(d_sa, h_sa, sizeof(h_sa), RT(MemcpyHostToDevice)));
  CHECK(RT(Memcpy)(d_sb, h_sb, sizeof(h_sb), RT(MemcpyHostToDevice)));
  CHECK(RT(Memset)(d_d, 0, sizeof(h_d)));
  CHECK(RT(Memset)(d_stray, 0, sizeof(*stray)));
  probe_kernel<<<NTOT, THREADS>>>(d_a, d_b, d_c, d_sa, d_sb, d_d, d_stray);
  CHECK(RT(GetLastError)());
  CHECK(RT(DeviceSynchronize)());
  CHECK(RT(Memcpy)(h_d, d_d, sizeof(h_d), RT(MemcpyDeviceToHost)));
  CHECK(RT(Memcpy)(stray, d_stray, sizeof(*stray), RT(MemcpyDeviceToHost)));
  CHECK(RT(Free)(d_a));
  CHECK(RT(Free)(d_b));
  CHECK(RT(Free)(d_c));
  CHECK(RT(Free)(d_sa));
  CHECK(RT(Free)(d_sb));
  CHECK(RT(Free)(d_d));
  CHECK(RT(Free)(d_stray));
  return 0;
}

static bool pass_any(int v);

static void print_row(int v) {
  unsigned long long xs[K > NSB ? K : NSB + 1];
  printf("    {\"index\": %d, \"a\": ", v);
  for (int i = 0; i < K; ++i) xs[i] = h_a[v * K + i];
  print_list(xs, K, $a_digits);
  printf(", \"b\": ");
  for (int i = 0; i < K; ++i) xs[i] = h_b[v * K + i];
  print_list(xs, K, $b_digits);
  printf(", \"c\": ");
  print_hex(h_c[v], $c_digits);
  if (SPARSE) {
    printf(", \"mask\": [");
    for (int i = 0; i < K; ++i) printf("%s%d", i ? ", " : "", (int)h_mask[v * K + i]);
    putchar(']');
  }
  if (NSB) {
    printf(", \"scale_a\": ");
    for (int i = 0; i < NSB; ++i) xs[i] = h_sa[v * NSB + i];
    print_list(xs, NSB, 2);
    printf(", \"scale_b\": ");
    for (int i = 0; i < NSB; ++i) xs[i] = h_sb[v * NSB + i];
    print_list(xs, NSB, 2);
  }
  printf(", \"d\": ");
  print_hex(h_d[v], $out_digits);
  if (NHYP) {
    printf(", \"matches\": [");
    for (int h = 0, n = 0; h < NHYP; ++h)
      if (h_expect[h * NVEC + v] == h_d[v]) { fputs(n++ ? ", " : "", stdout); print_string(h_hyp_id[h]); }
    putchar(']');
    fprintf(stderr, "probe: vector %d:", v);
    for (int h = 0; h < NHYP; ++h)
      fprintf(stderr, "%s %s %s", h ? "," : "", h_expect[h * NVEC + v] == h_d[v] ? "PASS" : "FAIL",
              h_hyp_id[h]);
    if (!pass_any(v))
      fprintf(stderr, " (device 0x%0*llx)", $out_digits, (unsigned long long)h_d[v]);
    fputc('\n', stderr);
  }
  printf("}%s\n", v + 1 < NVEC ? "," : "");
}

// Whether the device's d of vector v is the one some hypothesis expects.
static bool pass_any(int v) {
  for (int h = 0; h < NHYP; ++h)
    if (h_expect[h * NVEC + v] == h_d[v]) return true;
  return false;
}

// Host mode (./probe --host-d FILE): instead of running the kernel, read what it would
// have written from FILE: the d of every vector as NTOT hex words (the vectors', then the
// calibration vectors') and the count of stray elements of D. No GPU is touched and the
// output says "source": "host". tcsmt runs probes this way where no GPU is at hand
// (--device cuda-host:MODEL, hip-host:MODEL), with d computed by a model.
static int read_host_d(const char* path, unsigned int* stray) {
  FILE* f = fopen(path, "r");
  if (!f) { fprintf(stderr, "probe: cannot open %s\n", path); return 1; }
  int n = 0;
  for (unsigned long long x; n < NTOT && fscanf(f, "%llx", &x) == 1; ++n) h_d[n] = (acc_word)x;
  const bool ok = n == NTOT && fscanf(f, "%u", stray) == 1;
  fclose(f);
  if (!ok) fprintf(stderr, "probe: %s: expected %d hex words of d, then the count of stray elements\n",
                   path, NTOT);
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  int index = 0, runtime = 0, driver = 0;
  const char* host_d = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--device") && i + 1 < argc) index = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--host-d") && i + 1 < argc) host_d = argv[++i];
    else { fprintf(stderr, "probe: usage: %s [--device N] [--host-d FILE]\n", argv[0]); return 2; }
  }
  DEVICE_PROP prop;
  unsigned int stray = 0;
  if (host_d) {
    if (read_host_d(host_d, &stray) != 0) return 1;
  } else {
    CHECK(RT(SetDevice)(index));
    CHECK(RT(GetDeviceProperties)(&prop, index));
    CHECK(RT(RuntimeGetVersion)(&runtime));
    CHECK(RT(DriverGetVersion)(&driver));
    if (!device_supported(prop)) return 1;
    if (run(&stray) != 0) return 1;
  }
  int bad_cal = 0, first_bad = -1;
  for (int i = 0; i < NCAL; ++i)
    if (h_d[NVEC + i] != h_cal_d[i]) { if (first_bad < 0) first_bad = i; ++bad_cal; }

  printf("{\n  \"schema\": \"tcsmt-observations/1\",\n");
  if (host_d) {
    printf("  \"source\": \"host\",\n  \"device\": \"host\",\n  \"compute_capability\": \"none (host)\",\n");
    printf("  \"host_d\": ");
    print_string(host_d);
    printf(",\n");
  } else {
    printf("  \"source\": \"device\",\n  \"device\": ");
    print_string(prop.name);
    printf(",\n  \"compute_capability\": ");
    print_string(device_arch(prop));
    printf(",\n");
    print_versions(runtime, driver);
  }
  printf("  \"instruction\": \"$name\",\n");
  printf("  \"formats\": $formats_json,\n");
  printf("$scale_block_line");
  printf("$sparsity_line");
  printf("  \"k\": %d,\n", K);
  printf("  \"generator\": \"tcsmt $version harness\",\n");
  printf("  \"vectors_sha256\": \"$sha\",\n");
  if (stray == 0 && bad_cal == 0) printf("  \"layout_check\": \"ok\",\n");
  else {
    printf("  \"layout_check\": \"failed: %u elements of D broke the placement rule; "
           "%d of %d calibration vectors wrong", stray, bad_cal, NCAL);
    if (first_bad >= 0)
      printf(", the first (%s) gave 0x%llx, expected 0x%llx", h_cal_label[first_bad],
             (unsigned long long)h_d[NVEC + first_bad], (unsigned long long)h_cal_d[first_bad]);
    printf("\",\n");
  }
  int passed = 0;
  if (NHYP) {
    printf("  \"hypotheses\": [");
    for (int h = 0; h < NHYP; ++h) {
      int n = 0;
      for (int v = 0; v < NVEC; ++v) n += h_expect[h * NVEC + v] == h_d[v];
      printf("%s\n    {\"id\": ", h ? "," : "");
      print_string(h_hyp_id[h]);
      printf(", \"label\": ");
      print_string(h_hyp_label[h]);
      printf(", \"matched\": %d}", n);
      passed += n == NVEC;
    }
    printf("\n  ],\n");
  }
  printf("  \"observations\": [\n");
  for (int v = 0; v < NVEC; ++v) print_row(v);
  printf("  ]\n}\n");
  int follows = -1, full = 0;
  for (int h = 0; h < NHYP; ++h) {
    int n = 0;
    for (int v = 0; v < NVEC; ++v) n += h_expect[h * NVEC + v] == h_d[v];
    fprintf(stderr, "probe: %s %s (%s): the device gave its d on %d of %d vectors\n",
            n == NVEC ? "PASS" : "FAIL", h_hyp_id[h], h_hyp_label[h], n, NVEC);
    if (n == NVEC) { follows = h; ++full; }
  }
  if (full == 1 && NHYP > 1)
    fprintf(stderr, "probe: the device follows %s (%s), not the other %d\n",
            h_hyp_id[follows], h_hyp_label[follows], NHYP - 1);
  else if (full > 1)
    fprintf(stderr, "probe: %d of the %d expected models hold on every vector: "
                    "these vectors do not tell them apart\n", full, NHYP);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "probe: writing the observations failed\n");
    return 1;
  }
  if (stray != 0 || bad_cal != 0) {
    fprintf(stderr, "probe: the layout check failed (%u stray elements of D, %d wrong calibration "
                    "vectors): the observations are not trustworthy\n", stray, bad_cal);
    return 3;
  }
  if (NHYP && !passed) {
    fprintf(stderr, "probe: the device followed none of the %d expected models on every "
                    "vector (exit status 4)\n", NHYP);
    return 4;
  }
  return 0;
}
""")


def words(values: list[int], digits: int, per_line: int = 8) -> str:
    lines = []
    for i in range(0, len(values), per_line):
        lines.append("  " + ", ".join(f"0x{x:0{digits}x}u" for x in values[i:i + per_line]) + ",")
    return "\n".join(lines) or "  0u,"


def digits(fmt: Format) -> int:
    return (fmt.storage_bits + 3) // 4


def word_type(*fmts: Format) -> str:
    return "uint64_t" if max(f.storage_bits for f in fmts) > 32 else "uint32_t"


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def data_section(vs, ins: Instruction) -> str:
    """The defines and embedded arrays: the user's vectors, then calibration."""
    fa, fb = get_format(ins.in_format), get_format(ins.b_fmt)
    fc, fout = get_format(ins.c_format), get_format(ins.out_format)
    cal = calibration_vectors(ins)
    rows = vs.padded(ins.k)
    scales = vs.padded_scales(ins.k)
    masks = vs.padded_masks(ins.k) + [x.mask for x in cal]
    rows += [(x.a, x.b, x.c) for x in cal]
    scales += [(x.scale_a, x.scale_b) for x in cal]
    nsb = ins.scale_blocks
    flat_sa = [s for sa, _ in scales for s in sa] if nsb else [0] * len(rows)
    flat_sb = [s for _, sb in scales for s in sb] if nsb else [0] * len(rows)
    hyp_ids = [h for h, _ in vs.hypotheses]
    expect = [e[h] for h in hyp_ids for e in vs.expected] or [0] * len(vs.vectors)
    return DATA.substitute(
        nvec=len(vs.vectors), ncal=len(cal), k=ins.k, nsb=nsb, nhyp=len(hyp_ids),
        threads=ins.threads, a_word=word_type(fa), b_word=word_type(fb),
        acc_word=word_type(fc, fout), fa=fa.name, fb=fb.name, fc=fc.name, fout=fout.name,
        fscale=ins.scale_format or "none",
        a_data=words([fa.to_storage(x) for r in rows for x in r[0]], digits(fa)),
        b_data=words([fb.to_storage(x) for r in rows for x in r[1]], digits(fb)),
        c_data=words([fc.to_storage(r[2]) for r in rows], digits(fc)),
        sa_data=words(flat_sa, 2), sb_data=words(flat_sb, 2),
        sparse_data=sparse_section(ins, masks),
        cal_data=words([fout.to_storage(x.d) for x in cal], digits(fout)),
        cal_labels="\n".join(f"  {_c_string(x.label)}," for x in cal),
        hyp_ids=", ".join(_c_string(h) for h in hyp_ids) or '""',
        hyp_labels=", ".join(_c_string(label) for _, label in vs.hypotheses) or '""',
        expect_data=words([fout.to_storage(x) for x in expect], digits(fout)),
        abs_mask=f"0x{(1 << (fout.bits - (0 if fout.is_integer else 1))) - 1:x}",
        exp_mask=f"0x{((1 << fout.exp_bits) - 1) << fout.frac_bits:x}",
        frac_mask=f"0x{(1 << fout.frac_bits) - 1:x}")


SPARSE = Template("""\
// Sparse instruction ($sparsity): per vector, the mask (1: the metadata selects the term),
// the logical term of each stored element of row 0 of A (the compressed A), and the
// metadata words of lanes 0 and 1 (2-bit indices, four groups of four terms per 16 bits,
// row 0 in the low half; row 8, whose A is zero, selects terms 0 and 1).
#define SPARSE 1
#define KS $ks
static const uint8_t h_mask[NTOT * K] = {
$mask_data
};
__constant__ uint8_t SEL[NTOT * KS] = {
$sel_data
};
__constant__ uint32_t META[NTOT * 2] = {
$meta_data
};
""")


def sparse_section(ins: Instruction, masks: list) -> str:
    """The masks, compressed columns and metadata words of a sparse
    instruction (``#define SPARSE 0`` for a dense one). Metadata layout of
    mma.sp m16n8k32 with 16-bit types, sparsity selector 0 (PTX ISA
    "Sparse MMA metadata"): lane 0 holds row 0's indices of terms 0..15
    (four 4-bit groups, index of the first stored element in the low 2
    bits) in its low 16 bits, lane 1 those of terms 16..31."""
    if not ins.sparsity:
        return "#define SPARSE 0\nstatic const uint8_t h_mask[1] = {0};\n"
    sel, meta = [], []
    for m in masks:
        picked = [i for i, x in enumerate(m) if x]
        sel += picked
        nibbles = [(picked[2 * g] % 4) | (picked[2 * g + 1] % 4) << 2 for g in range(len(m) // 4)]
        for half in range(len(m) // 16):
            low = sum(x << (4 * j) for j, x in enumerate(nibbles[4 * half:4 * half + 4]))
            meta.append(0x4444 << 16 | low)
    return SPARSE.substitute(sparsity=ins.sparsity, ks=ins.stored_k,
                             mask_data=words([x for m in masks for x in m], 1),
                             sel_data=words(sel, 2), meta_data=words(meta, 8))


def main_section(vs, ins: Instruction) -> str:
    import json
    fa, fb = get_format(ins.in_format), get_format(ins.b_fmt)
    fc, fout = get_format(ins.c_format), get_format(ins.out_format)
    block = (f'  \\"scale_block\\": {ins.scale_block},\\n' if ins.scale_block else "")
    sparsity = (f'  \\"sparsity\\": \\"{ins.sparsity}\\",\\n' if ins.sparsity else "")
    return MAIN.substitute(
        name=ins.name, formats_json=json.dumps(ins.formats()).replace('"', '\\"'),
        scale_block_line=block, sparsity_line=sparsity, version=__version__, sha=vs.sha256 or "unknown",
        a_digits=digits(fa), b_digits=digits(fb), c_digits=digits(fc), out_digits=digits(fout))
