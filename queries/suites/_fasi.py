"""Transcription of the test suite of Fasi, Higham, Mikaitis and Pranesh
(V100, T4, A100), for _build.py.

Inputs and expected outputs are those of the authors' test programs
(tc_test_numerics-V100.cu, tc_test_numerics-T4-A100-binary16.cu,
tc_test_numerics-A100-bf16.cu, tc_test_numerics-A100-tf32.cu), read from
the copy north-numerical-computing/tensor-cores-numerical-behavior of
github.com/mfasi/tensor-cores-numerical-behavior, and the values the paper
states in its text (seeds 001 and 002). Each vector says which. The paper's
section names are those of the PeerJ version; the EPrint numbers them 3.1.1
to 3.2.
"""

from __future__ import annotations

from tcsmt.queries.suites._build import claim, suite, vector

PAPER = ('M. Fasi, N. J. Higham, M. Mikaitis, S. Pranesh, "Numerical behavior of NVIDIA '
         'tensor cores", PeerJ Computer Science 7:e330 (2021), doi:10.7717/peerj-cs.330; '
         'first as MIMS EPrint 2020.10 (V100 and T4)')
CODE = ("test programs of github.com/mfasi/tensor-cores-numerical-behavior "
        "(read from its copy north-numerical-computing/tensor-cores-numerical-behavior)")

S_SUB = "Support for subnormal numbers (EPrint 3.1.1)"
S_ACC = "Accuracy of the dot products (EPrint 3.1.2)"
S_RND = "Rounding modes in tensor core computations (EPrint 3.1.3)"
S_ALIGN = "Features of the accumulator: extra bits in the alignment of significands (EPrint 3.1.4)"
S_NADD = "Features of the accumulator: normalization in addition (EPrint 3.1.4)"
S_NSUB = "Features of the accumulator: normalization in subtraction (EPrint 3.1.4)"
S_CARRY = "Features of the accumulator: extra bits for carry out (EPrint 3.1.4)"
S_MONO = "Features of the accumulator: monotonicity of dot product (EPrint 3.1.4)"
S_TURING = "NVIDIA Turing tensor cores (EPrint 3.2)"
S_AMPERE = "NVIDIA Ampere tensor cores"

K = 4   # the paper's 4-term dot product (2); every other entry of A and B is 0


def _dev(devices, value):
    return {d: value for d in devices}


def subnormal_vectors(devices: list[str], fp16_group: str, fp32_group: str, code_only: bool) -> list:
    """The binary16 subnormal tests, with binary16 and binary32 output.

    The paper states 2^-15 for the subnormal outputs (in both modes, on
    V100); the T4/A100 program only asserts a non-zero output."""
    v100 = devices == ["V100"]
    out = []
    for group, mode in ((fp16_group, "binary16"), (fp32_group, "binary32")):
        out.append(vector(
            f"{group}.sub-in", group,
            f"a11 = 2^-24 (smallest binary16 subnormal), b11 = 4, the rest 0; {mode} output",
            ["2^-24"], ["4"], "0", k=K, section=S_SUB,
            test=f"Binary16 subnormals in input ({mode} mode)",
            claims=[claim("subnormal inputs", "subnormals",
                          "d = 2^-22: the binary16 subnormal input is used, not flushed "
                          "(flushing inputs gives 0)", _dev(devices, "2^-22"),
                          basis="the test program's expected value")]))
        if group == fp32_group:
            out.append(vector(
                f"{group}.sub-c", group,
                "c11 = 2^-149 (smallest binary32 subnormal), A and B zero",
                [], [], "2^-149", k=K, section=S_SUB, test="Binary32 subnormals in input",
                claims=[claim("subnormal c", "subnormals",
                              "d = 2^-149: the binary32 subnormal c is not altered "
                              "(flushing gives 0)", _dev(devices, "2^-149"),
                              basis="the test program's expected value")]))
        for suffix, a, b, c, what in (
                ("sub-out", "2^-14", "2^-1", "0", "a11 = 2^-14 (smallest normal binary16), b11 = 2^-1"),
                ("sub-out-c", "2^-14", "1", "-2^-15", "a11 = 2^-14, b11 = 1, c11 = -2^-15")):
            reveals = ("d = 2^-15: a binary16 subnormal is computed from normal inputs and returned "
                       "(flushing outputs gives 0)")
            if v100:
                cl = claim("subnormal outputs", "subnormals", reveals, _dev(devices, "2^-15"),
                           basis="value stated in the paper's text (\"return the binary16 "
                                 "subnormal 2^-15 in both binary16 and binary32 modes\")")
            else:
                cl = claim("subnormal outputs", "subnormals", reveals,
                           relation={"op": "!=", "value": "0", "devices": devices},
                           basis="the test program asserts only d != 0")
            out.append(vector(f"{group}.{suffix}", group, f"{what}; {mode} output",
                              [a], [b], c, k=K, section=S_SUB,
                              test=f"Binary16 subnormals in output ({mode} mode)", claims=[cl],
                              note=None if v100 else
                              "the program's first check of this test reads the binary32 array, "
                              "not the binary16 result; the intended check is d != 0"))
    if v100 and not code_only:
        out.append(vector(
            f"{fp32_group}.sub-truncated", fp32_group,
            "a11 = a12 = 1, b11 = 2^-23 + 2^-24 (binary16 subnormal), b21 = 2, the rest 0",
            ["1", "1"], ["2^-23 + 2^-24", "2"], "0", k=K, section=S_SUB,
            claims=[claim("subnormals handled in the tensor core", "align_rounding",
                          "d = 2: the subnormal product is rounded down against 2 (round toward "
                          "zero in the tensor core); a round-to-nearest addition on CUDA cores "
                          "would give 2 + 2^-22", _dev(devices, "2"),
                          basis="value stated in the paper's text (no test program has it)")]))
    return [v for v in out if v]


def accuracy_vectors(devices, g16, g32, one_minus, prod, prod4, sum16) -> list:
    """Products exact with binary32 and binary16 output."""
    return [
        vector(f"{g32}.products-exact-1", g32, f"a11 = b11 = {one_minus}, the rest 0",
               [one_minus], [one_minus], "0", k=K, section=S_ACC,
               test="Products are computed exactly",
               claims=[claim("exact products", "product_rounding",
                             f"d = {prod} (exact): the product is not rounded to the input format",
                             _dev(devices, prod), basis="the test program's expected value")]),
        vector(f"{g32}.products-exact-4", g32, f"first row of A and column of B {one_minus}, c11 = 0",
               [one_minus] * 4, [one_minus] * 4, "0", k=K, section=S_ACC,
               test="Products are computed exactly",
               claims=[claim("exact products", "product_rounding",
                             f"d = 4*({prod}) exact: products are held exactly and summed",
                             _dev(devices, prod4), basis="the test program's expected value")]),
    ] + ([vector(
        f"{g16}.products-exact", g16,
        "a11 = b11 = a12 = 1 - 2^-11, b21 = 2^-11, the rest 0; binary16 c and d",
        ["1 - 2^-11", "1 - 2^-11"], ["1 - 2^-11", "2^-11"], "0", k=K, section=S_ACC,
        test="Products exact (binary16 mode)",
        claims=[claim("exact products with binary16 output", "product_rounding",
                      "d = 1 - 2^-10 + 2^-11: representable in binary16 but not computed exactly "
                      "by a binary16 accumulator; products are held exactly", _dev(devices, sum16),
                      basis="the test program's expected value")])] if g16 else [])


def order_vectors(devices, g32, small_a: str, small_b: str, tiny_text: str,
                  more_claims: tuple = ()) -> list:
    """Four tiny addends and one 1 (c = 1, then 1 in each product)."""
    out = [vector(
        f"{g32}.tiny-products-c1", g32,
        f"first row of A {small_a}, first column of B {small_b} ({tiny_text} products), c11 = 1",
        [small_a] * 4, [small_b] * 4, "1", k=K, section=S_ACC,
        test="Products are accumulated in binary32",
        claims=[claim("binary32 accumulation", "align_bits",
                      f"d = 1: each {tiny_text} addend is lost against 1 (four rounding errors); "
                      f"an exact sum would keep them", _dev(devices, "1"),
                      basis="the test program's expected value"), *more_claims])]
    for j in range(4):
        a = [small_a] * 4
        b = [small_b] * 4
        a[j], b[j] = "1", "1"
        out.append(vector(
            f"{g32}.largest-first-{j + 1}", g32,
            f"c11 = 2^-24, product {j + 1} is 1, the other products {tiny_text}",
            a, b, "2^-24", k=K, section=S_ACC, test="Sum starts from largest element",
            claims=[claim("accumulation order", "add_order",
                          "d = 1 wherever the 1 is: the addends are aligned to the largest before "
                          "any is added; adding the small ones first (a chain of additions) would "
                          "keep their sum", _dev(devices, "1"),
                          basis="the test program's expected value")]))
    return out


def rounding_vectors(devices, g16, g32) -> list:
    out = []
    for sign, name in (("", "pos"), ("-", "neg")):
        out.append(vector(
            f"{g32}.round-{name}", g32,
            f"first row of A 1, b11 = {sign}2, b21 = {sign}(2^-23 + 2^-24), the rest 0",
            ["1"] * 4, [f"{sign}2", f"{sign}(2^-23 + 2^-24)", "0", "0"], "0", k=K, section=S_RND,
            test="Round-down for positive values" if not sign else "Round-up for negative values",
            claims=[claim("rounding of the additions", "align_rounding",
                          f"d = {sign}2: " + ("round toward zero or down; to nearest or up give "
                                              "2 + 2^-22" if not sign else
                                              "round toward zero or up; with the positive case, "
                                              "toward zero"),
                          _dev(devices, f"{sign}2"), basis="the test program's expected value")]))
    if g16:
        out.append(vector(
            f"{g16}.round-output", g16, "a11 = a12 = 2^-24, b11 = 2^-1, b21 = 2^-2, c11 = 0; binary16 output",
            ["2^-24", "2^-24"], ["2^-1", "2^-2"], "0", k=K, section=S_RND,
            test="Accum. is rounded to nearest (binary16 mode)",
            claims=[claim("rounding to binary16 output", "final_rounding",
                          "d = 2^-24: 3/4 of 2^-24 rounds up, so round to nearest (or up); "
                          "toward zero or down give 0", _dev(devices, "2^-24"),
                          basis="the test program's expected value")]))
    return out


def accumulator_vectors(devices, g32, align_d: str, sub_d: str) -> list:
    """Alignment bits, normalisation, carry bits, final rounding."""
    out = [
        vector(f"{g32}.align-bits", g32, "a11 = b11 = 1, c11 = -(1 - 2^-24), the rest 0",
               ["1"], ["1"], "-(1 - 2^-24)", k=K, section=S_ALIGN,
               test="1) Extra bits in the significand alignment",
               claims=[claim("extra alignment bits", "align_bits",
                             "d = 2^-23 means no extra bit (c's last bit is lost when aligned "
                             "to 1); 2^-24 means one extra bit", _dev(devices, align_d),
                             basis="the test program's expected value")]),
        vector(f"{g32}.normalise-add", g32,
               "first row of A 1, first column of B 2^-24, c11 = 1 - 2^-24",
               ["1"] * 4, ["2^-24"] * 4, "1 - 2^-24", k=K, section=S_NADD,
               test="2) Normalization in addition",
               claims=[claim("no normalisation of partial sums", "normalisation",
                             "d = 1 + 2^-23: only the final sum is normalised; normalising "
                             "c + 2^-24 = 1 first (then truncating) gives 1",
                             _dev(devices, "1 + 2^-23"), basis="the test program's expected value")]),
        vector(f"{g32}.normalise-subtract", g32,
               "a11 = a12 = 1, b11 = 1, b21 = -2^-24, c11 = -1 + 2^-24",
               ["1", "1"], ["1", "-2^-24"], "-1 + 2^-24", k=K, section=S_NSUB,
               test="3) Normalization in subtraction",
               claims=[claim("no normalisation in subtraction", "normalisation",
                             "V100: d = 2^-23, the difference is not normalised (normalised "
                             "partial sums give 0); with one extra alignment bit the exact 0 "
                             "is expected", _dev(devices, sub_d),
                             basis="the test program's expected value")]),
    ]
    for i in range(4):
        b = ["1"] * 4
        b[i] = "2^-23"
        out.append(vector(
            f"{g32}.carry-2bits-{i + 1}", g32,
            f"c11 = 1 + 2^-22 + 2^-23, first column of B 1, 1, 1 and 2^-23 (2^-23 in place {i + 1})",
            ["1"] * 4, b, "1 + 2^-22 + 2^-23", k=K, section=S_CARRY,
            test="4) Extra bits for carry out",
            claims=[claim("carry bits", "carry_bits",
                          "d = 4 + 2^-21 (exact) in every order: at least 2 extra bits for carries "
                          "(the paper's count; tcsmt counts above a product's 2 integer bits, so "
                          "carry_bits >= 1)", _dev(devices, "4 + 2^-21"),
                          basis="the test program's expected value")]))
    out += [
        vector(f"{g32}.carry-3bits", g32,
               "c11 = 1.875, b = 1, 1.5, 1.75, 1.875, first row of A 1",
               ["1"] * 4, ["1", "1.5", "1.75", "1.875"], "1.875", k=K, section=S_CARRY,
               test="4) Extra bits for carry out (third bit)",
               claims=[claim("carry bits", "carry_bits",
                             "d = 8: a third carry bit (with two the adder overflows and gives "
                             "0; tcsmt: carry_bits >= 2)", _dev(devices, "8"),
                             basis="the test program's expected value")]),
    ]
    for sign, name in (("", "pos"), ("-", "neg")):
        out.append(vector(
            f"{g32}.final-round-{name}", g32,
            f"c11 = {sign}(1 + 2^-22 + 2^-23), first column of B {sign}1, first row of A 1",
            ["1"] * 4, [f"{sign}1"] * 4, f"{sign}(1 + 2^-22 + 2^-23)", k=K, section=S_CARRY,
            test="4) Extra bits for carry out (round-" + ("down" if not sign else "up")
                 + " in normalization)",
            claims=[claim("rounding of the normalised result", "final_rounding",
                          f"d = {sign}5: the final normalisation rounds toward zero; to nearest "
                          f"gives {sign}(5 + 2^-21)", _dev(devices, f"{sign}5"),
                          basis="the test program's expected value")]))
    return out


def fp16_suite_vectors(devices: list[str], g16: str, g32: str) -> list:
    """The binary16-input tests for V100 (devices == ["V100"]) or T4/A100."""
    v100 = devices == ["V100"]
    vs = subnormal_vectors(devices, g16, g32, code_only=not v100)
    vs += accuracy_vectors(devices, g16, g32, "1 - 2^-11", "1 - 2^-10 + 2^-22",
                           "4*(1 - 2^-10 + 2^-22)", "1 - 2^-10 + 2^-11")
    if v100:
        # the paper's monotonicity pair is c = 1 - 2^-24 (normalise-add) and
        # c = 1, whose inputs are this test's
        vs += order_vectors(devices, g32, "1", "2^-24", "2^-24", (MONO_V100(g32),))
    else:
        vs += order_vectors(devices, g32, "0.5", "2^-24", "2^-25")
    vs += rounding_vectors(devices, g16, g32)
    vs += accumulator_vectors(devices, g32, "2^-23" if v100 else "2^-24", "2^-23" if v100 else "0")
    if not v100:
        vs += monotonicity_vectors(devices, g32)
    return vs


def MONO_V100(g32: str) -> dict:
    return claim("monotonicity", "normalisation",
                 "d(c = 1) = 1 < d(c = 1 - 2^-24) = 1 + 2^-23 (vector normalise-add): a larger c "
                 "gives a smaller sum; the dot product is not monotonic", {"V100": "1"},
                 relation={"op": "<", "vector": f"{g32}.normalise-add", "devices": ["V100"]},
                 basis="values stated in the paper's text; the test program asserts the order")


def monotonicity_vectors(devices, g32, a_half: str = "0.5") -> list:
    """T4/A100: the programs' pair (a = 1/2, other b), which asserts only
    d(c = 1) < d(c = 1 - 2^-24); and the paper's pair, with the claim the
    paper makes for every generation (see the note)."""
    tiny = ["2^-24", "2^-24", "2^-24", "2^-23 + 2^-24"]
    pair = [
        vector(f"{g32}.monotonic-low", g32,
               "first row of A 1/2, first column of B 2^-24, 2^-24, 2^-24, 2^-23 + 2^-24, "
               "c11 = 1 - 2^-24", [a_half] * 4, tiny, "1 - 2^-24", k=K, section=S_MONO,
               test="5) Monotonicity of dot product",
               claims=[claim("monotonicity", "normalisation",
                             "the first of a pair: see monotonic-high", {},
                             relation={"op": ">", "vector": f"{g32}.monotonic-high", "devices": devices},
                             basis="the test program asserts only the order of the two outputs")]),
        vector(f"{g32}.monotonic-high", g32,
               "as monotonic-low with the larger c11 = 1", [a_half] * 4, tiny, "1", k=K,
               section=S_MONO, test="5) Monotonicity of dot product",
               claims=[claim("monotonicity", "normalisation",
                             "d(c = 1) < d(c = 1 - 2^-24): the dot product is not monotonic",
                             {}, relation={"op": "<", "vector": f"{g32}.monotonic-low",
                                           "devices": devices},
                             basis="the test program asserts only the order of the two outputs")]),
    ]
    if g32 != "fp16-fp32":
        return pair
    return pair + [vector(
        f"{g32}.monotonic-paper-c1", g32,
        "first row of A 1, first column of B 2^-24, c11 = 1 (with c11 = 1 - 2^-24 it is vector "
        "normalise-add)", ["1"] * 4, ["2^-24"] * 4, "1", k=K, section=S_MONO,
        note="The paper prints this pair (d = 1 + 2^-23 with c11 = 1 - 2^-24, d = 1 with c11 = 1) "
             "as its demonstration that tensor cores are not monotonic, and its Conclusions give "
             "T4 and A100 every V100 feature but the extra alignment bit, non-monotonicity "
             "included. The authors' T4/A100 program tests monotonicity with other inputs "
             "(monotonic-low, monotonic-high). The claim is transcribed as published, not "
             "corrected: with one extra alignment bit, c11 = 1 keeps the 2^-24 products.",
        claims=[claim("monotonicity", "normalisation",
                      "d(c = 1) < d(c = 1 - 2^-24): a larger c gives a smaller sum; the dot "
                      "product is not monotonic", {},
                      relation={"op": "<", "vector": f"{g32}.normalise-add", "devices": devices},
                      basis="claim of the paper's text and Conclusions for every generation")])]


def wide_subnormal_vectors(devices, g: str, name: str, smallest: str, scale: str, test_in: str,
                           test_out: str) -> list:
    """bfloat16 and TensorFloat-32: their subnormals are binary32 subnormals
    too, so subnormal binary32 outputs can come from normal inputs."""
    return [
        vector(f"{g}.sub-in", g, f"a11 = {smallest} (smallest {name} subnormal), b11 = {scale}",
               [smallest], [scale], "0", k=K, section=S_AMPERE, test=test_in,
               claims=[claim("subnormal inputs", "subnormals",
                             f"d = 2^-126: the {name} subnormal input is used, not flushed",
                             _dev(devices, "2^-126"), basis="the test program's expected value")]),
        vector(f"{g}.sub-c", g, "c11 = 2^-149 (smallest binary32 subnormal), A and B zero",
               [], [], "2^-149", k=K, section=S_AMPERE, test="Binary32 subnormals in input",
               claims=[claim("subnormal c", "subnormals", "d = 2^-149: the subnormal c is kept",
                             _dev(devices, "2^-149"), basis="the test program's expected value")]),
        vector(f"{g}.sub-out", g, "a11 = 2^-126, b11 = 2^-1 (normal values), the rest 0",
               ["2^-126"], ["2^-1"], "0", k=K, section=S_AMPERE, test=test_out,
               claims=[claim("subnormal outputs", "subnormals",
                             "d = 2^-127: a binary32 subnormal is produced from normal inputs "
                             "(flushing outputs gives 0)", _dev(devices, "2^-127"),
                             basis="value stated in the paper's text and the test program's"
                                   if name == "bfloat16" else "the test program's expected value")]),
        vector(f"{g}.sub-out-c", g, "a11 = 2^-126, b11 = 1, c11 = -2^-127",
               ["2^-126"], ["1"], "-2^-127", k=K, section=S_AMPERE, test=test_out,
               claims=[claim("subnormal outputs", "subnormals",
                             "d = 2^-127: a binary32 subnormal result of a cancellation",
                             _dev(devices, "2^-127"), basis="the test program's expected value")]),
    ]


def wide_vectors(devices, g: str, name: str, smallest: str, scale: str, one_minus: str,
                 prod: str, note: str = "") -> list:
    """The A100 bfloat16 and TensorFloat-32 programs: the T4/A100 binary16
    tests with the input format's constants."""
    short = "Bfloat16" if name == "bfloat16" else "TF32"
    vs = wide_subnormal_vectors(devices, g, name, smallest, scale,
                                f"{short} subnormals in input (binary32 mode)",
                                f"{short}/binary32 subnormals in output (binary32 mode)"
                                if name == "bfloat16" else
                                "TF32/Binary32 subnormals in output (binary32 mode)")
    acc = accuracy_vectors(devices, None, g, one_minus, prod, f"4*({prod})", "")
    if note:
        for v in acc:
            v["note"] = note
    vs += acc
    vs += order_vectors(devices, g, "0.5", "2^-24", "2^-25")
    vs += rounding_vectors(devices, None, g)
    vs += accumulator_vectors(devices, g, "2^-24", "0")
    vs += monotonicity_vectors(devices, g)
    return vs


def t4_text_vector(devices, g32) -> dict:
    return vector(
        f"{g32}.two-tiny-exact", g32,
        "the operation 1 + 2^-24 + 2^-24: c11 = 1, a11 = a12 = 1, b11 = b21 = 2^-24",
        ["1", "1"], ["2^-24", "2^-24"], "1", k=K, section=S_TURING,
        note="The paper names the operation, not which addend is c; c11 = 1 is chosen here, "
             "as in its tests of (3). Either placement gives the same sum.",
        claims=[claim("extra alignment bit", "align_bits",
                      "d = 1 + 2^-23: 1 + 2^-24 + 2^-24 is exact on T4 because of the extra "
                      "alignment bit (without it the 2^-24 addends are lost and d = 1)",
                      _dev(devices, "1 + 2^-23"), basis="stated in the paper's text")])


def suites() -> list[dict]:
    v100 = suite(
        "fasi-v100", "Fasi et al.: NVIDIA V100 (Volta) tensor cores",
        f"{PAPER}; section \"NVIDIA Volta tensor cores\" (EPrint 3.1) and Table 2; inputs and "
        f"expected outputs of tc_test_numerics-V100.cu in the {CODE}",
        "wmma 16x16x16 with every entry of A and B but the first 4 of a row and column zero, so "
        "each vector is the 4-term dot product (2). binary16 inputs; binary32 output (group "
        "fp16-fp32) and binary16 output (fp16-fp16). Expectations are V100 outputs.",
        fp16_suite_vectors(["V100"], "fp16-fp16", "fp16-fp32"))
    t4 = suite(
        "fasi-t4", "Fasi et al.: NVIDIA T4 (Turing) tensor cores",
        f"{PAPER}; section \"NVIDIA Turing tensor cores\" (EPrint 3.2); inputs and expected "
        f"outputs of tc_test_numerics-T4-A100-binary16.cu in the {CODE}",
        "The V100 tests with the constants the paper changes for T4's extra alignment bit "
        "(2^-24 products become 2^-25 in the order tests). Turing's block size is disputed "
        "(4 in these tests, 8 in MMA-Sim; the shipped model says 8); no vector here has more "
        "than 4 products, so none tells the two apart. Expectations are T4 outputs.",
        fp16_suite_vectors(["T4"], "fp16-fp16", "fp16-fp32") + [t4_text_vector(["T4"], "fp16-fp32")])
    a100 = suite(
        "fasi-a100", "Fasi et al.: NVIDIA A100 (Ampere) tensor cores",
        f"{PAPER}; section \"NVIDIA Ampere tensor cores\" and Conclusions; inputs and expected "
        f"outputs of tc_test_numerics-T4-A100-binary16.cu, tc_test_numerics-A100-bf16.cu and "
        f"tc_test_numerics-A100-tf32.cu in the {CODE}",
        "Groups fp16-fp32 and fp16-fp16 (binary16 inputs), bf16-fp32 (bfloat16 inputs) and "
        "tf32-fp32 (TensorFloat-32 inputs), each with its own formats. The binary64 mode the "
        "paper also describes is not transcribed. Expectations are A100 outputs.",
        fp16_suite_vectors(["A100"], "fp16-fp16", "fp16-fp32")
        + wide_vectors(["A100"], "bf16-fp32", "bfloat16", "2^-133", "2^7",
                       "1 - 2^-8", "1 - 2^-7 + 2^-16")
        + wide_vectors(["A100"], "tf32-fp32", "TensorFloat-32", "2^-136", "2^10",
                       "1 - 2^-11", "1 - 2^-10 + 2^-22",
                       note="The program stores the binary32 value 1 - 2^-24 and lets the "
                            "tensor core read it as TensorFloat-32; its expected product "
                            "(1 - 2^-11)^2 shows the low 13 bits were dropped, giving the "
                            "TensorFloat-32 input 1 - 2^-11 written here."))
    return [v100, t4, a100]
