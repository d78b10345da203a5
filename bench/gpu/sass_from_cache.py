#!/usr/bin/env python3
"""sass_from_cache.py - the machine code NVIDIA's Vulkan driver made of one compute pipeline,
as text, from the pipeline cache vk_shader_stats saves (OI_IR_DIR/pipeline_cache.bin).

    pip install zstandard nvidia-cuda-nvdisasm       # on the dev machine, not on the GPU machine
    python3 bench/gpu/sass_from_cache.py pipeline_cache.bin > shader.sass

The cache's payload is one zstd frame. Inside it the code is a raw run of 16-byte instructions
with no ELF around it, so this finds it: the first EXIT ends it, and it starts at the earliest
16-byte step before that from which nvdisasm (-b SM90, Hopper) reads every instruction. Counting
instructions (grep -c HMMA, MOVM, LDSM ...) is what it is for: see matmul_coopmat.comp's header.
"""
import glob
import os
import subprocess
import sys
import tempfile

import zstandard

EXIT = bytes.fromhex("4d79000000000000")  # the low half of SM90's EXIT


def nvdisasm() -> str:
    import nvidia  # the namespace package nvidia-cuda-nvdisasm installs into
    for root in nvidia.__path__:
        for path in glob.glob(os.path.join(root, "**", "bin", "nvdisasm"), recursive=True):
            os.chmod(path, 0o755)  # wheels may drop the execute bit
            return path
    sys.exit("sass_from_cache.py: no nvdisasm (pip install nvidia-cuda-nvdisasm)")


def payload(cache: bytes) -> bytes:
    frame = cache.find(b"\x28\xb5\x2f\xfd")  # the zstd magic
    if frame < 0:
        sys.exit("sass_from_cache.py: no zstd frame in the cache")
    return zstandard.ZstdDecompressor().decompressobj().decompress(cache[frame:])


def disassemble(code: bytes, tool: str) -> str:
    end = code.find(EXIT)
    if end < 0:
        sys.exit("sass_from_cache.py: no EXIT instruction in the payload")
    end += 16
    with tempfile.NamedTemporaryFile(suffix=".bin") as raw:
        for start in range(end % 16, end, 16):
            raw.seek(0)
            raw.truncate()
            raw.write(code[start:end])
            raw.flush()
            done = subprocess.run([tool, "-b", "SM90", raw.name], capture_output=True, text=True)
            if done.returncode == 0:
                return done.stdout
    sys.exit("sass_from_cache.py: nvdisasm read no run of instructions")


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], "rb") as f:
        sys.stdout.write(disassemble(payload(f.read()), nvdisasm()))


if __name__ == "__main__":
    main()
