#!/usr/bin/env python3
"""Machine code of the kernels in an NVIDIA Vulkan pipeline cache, for tuning.

Vulkan exposes no SASS, but NVIDIA's driver (580 series, Hopper) stores each compiled
pipeline in the VkPipelineCache data that the engine saves under NX_VULKAN_CACHE_DIR: a
zstd frame per pipeline holding an "NVDANVVM" container, whose code is a raw instruction
stream. This writes each pipeline's code as pNN_BYTES.bin and, where `nvdisasm` is on the
PATH (the CUDA toolkit; on the device machines), its disassembly as pNN_BYTES.sass with a
count of each instruction and the highest register named.

    NX_VULKAN_CACHE_DIR=/tmp/pc build/bench/nxv_bench --benchmark_filter=BM_DotF32_8192/
    python3 scripts/nv_pipeline_sass.py /tmp/pc/pipelines-*.bin /tmp/sass [--arch SM90]

Needs the `zstd` command (the device machines lack it: this machine's /usr/bin/zstd, carried
and put on the PATH, runs there). The container layout was read off this driver's caches (the
code's size at byte 0x4c, its offset at 0x50, plus 8); another driver may differ.
"""
import argparse
import collections
import os
import re
import shutil
import struct
import subprocess
import sys

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def frame_end(data, at):
    """End of the zstd frame starting at `at` (RFC 8878: header, then blocks)."""
    descriptor = data[at + 4]
    pos = at + 5
    single_segment = (descriptor >> 5) & 1
    content_size_bytes = [0, 2, 4, 8][descriptor >> 6] or (1 if single_segment else 0)
    dictionary_bytes = [0, 1, 2, 4][descriptor & 3]
    pos += (0 if single_segment else 1) + dictionary_bytes + content_size_bytes
    while True:
        header = data[pos] | (data[pos + 1] << 8) | (data[pos + 2] << 16)
        pos += 3
        last, kind, size = header & 1, (header >> 1) & 3, header >> 3
        pos += 1 if kind == 1 else size  # an RLE block stores one byte
        if last:
            break
    if (descriptor >> 2) & 1:
        pos += 4  # content checksum
    return pos


def pipelines(data):
    """The code of each pipeline in the cache, in order."""
    pos = 0
    while (at := data.find(ZSTD_MAGIC, pos)) >= 0:
        pos = at + 4
        try:
            end = frame_end(data, at)
            raw = subprocess.run(["zstd", "-q", "-d", "-c"], input=data[at:end], capture_output=True).stdout
        except (IndexError, OSError):
            continue
        if not raw.startswith(b"NVDANVVM"):
            continue
        size, offset = struct.unpack_from("<II", raw, 0x4C)
        yield raw[offset + 8 : offset + 8 + size]
        pos = end


def summarise(sass):
    ops = collections.Counter()
    for line in sass.splitlines():
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_]+)((\.[A-Z0-9_]+)*)", line)
        if m:
            ops[m.group(2) + m.group(3)] += 1
    regs = [int(r) for r in re.findall(r"\bR(\d+)\b", sass)]
    top = " ".join(f"{k}:{v}" for k, v in ops.most_common(16))
    return f"{sum(ops.values())} instructions, R0-R{max(regs, default=0)}; {top}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cache", help="a pipelines-*.bin file of NX_VULKAN_CACHE_DIR")
    parser.add_argument("out", help="directory for the .bin (and .sass) files")
    parser.add_argument("--arch", default="SM90", help="nvdisasm's --binary architecture (default SM90)")
    args = parser.parse_args()
    if not shutil.which("zstd"):
        sys.exit("needs the zstd command")
    os.makedirs(args.out, exist_ok=True)
    nvdisasm = shutil.which("nvdisasm")
    for i, code in enumerate(pipelines(open(args.cache, "rb").read())):
        path = os.path.join(args.out, f"p{i:02d}_{len(code)}")
        open(path + ".bin", "wb").write(code)
        if not nvdisasm:
            print(path + ".bin")
            continue
        sass = subprocess.run([nvdisasm, "--binary", args.arch, path + ".bin"], capture_output=True, text=True).stdout
        open(path + ".sass", "w").write(sass)
        print(path + ".sass:", summarise(sass))


if __name__ == "__main__":
    main()
