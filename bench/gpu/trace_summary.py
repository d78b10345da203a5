#!/usr/bin/env python3
"""trace_summary.py - where a step's time goes, from a trace JSON written
with the per-op timer on (encoder_peer --trace FILE, or oi_executor_trace_json
of an executor made with desc.timer): one line per node that ran on the GPU
(inputs -> outputs, GPU microseconds from the timestamp queries, host
microseconds of the node), then the totals.
Usage: python3 trace_summary.py FILE
"""
import json
import sys


def host_micros(event):
    ms, us, ns = event["micros"]
    return ms * 1000 + us + ns / 1000


def main():
    events = json.load(open(sys.argv[1]))
    gpu_total = host_total = 0.0
    print(f"{'node':<40} {'gpu us':>9} {'host us':>9}")
    for e in events:
        host = host_micros(e)
        host_total += host
        if "gpu_micros" not in e:
            continue
        gpu_total += e["gpu_micros"]
        label = f"{e['kind']} {','.join(e['params'])} -> {','.join(e['output'])}"
        print(f"{label[:40]:<40} {e['gpu_micros']:9.1f} {host:9.1f}")
    print(f"{'total (' + str(len(events)) + ' events)':<40} {gpu_total:9.1f} {host_total:9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
