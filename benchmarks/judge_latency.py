"""Latency, no-verdict rate and throughput of the ``judge`` family against a loopback OpenAI-compatible server.

The server is the tests' own (``tests/rewards/judge_server.py``: a threaded ``http.server`` answering with
logprobs), so the numbers measure rlif's side (client, gate, cache, router), not a model. Three runs: a fast server
(every sample judged), a server slower than the timeout on a share of requests (no verdicts within the limit), and
the throughput of judged samples per process with the cache off, single process.

Run: ``PYTHONPATH=.:tests/rewards python benchmarks/judge_latency.py [--samples N]``; the result is
benchmarks/judge_latency.md.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time


def run(url: str, samples: int, timeout_s: float, concurrency: int) -> tuple[list[float], int]:
    from concurrent.futures import ThreadPoolExecutor

    import rewards
    from rewards.judge import normalize_ground_truth

    gt = normalize_ground_truth(
        {
            "prompt": "Write a note to a friend.",
            "hard": {"instruction_ids": ["punctuation:no_comma"], "kwargs": [{}]},
            "soft": [{"kind": "tone", "constraint": "cheerful"}, {"kind": "content", "constraint": "mention tea"}],
        },
        where="benchmark",
    )
    options = {
        "judge_url": url,
        "judge_model": "bench",
        "judge_timeout_s": timeout_s,
        "judge_retries": 0,
        "judge_concurrency": concurrency,
        "judge_cache_size": 0,
    }

    def one(i: int) -> tuple[float, float]:
        start = time.perf_counter()
        out = rewards.compute_score("judge/bench", f"Hello friend number {i}. Tea soon!", gt, None, **options)
        return time.perf_counter() - start, out["judge_no_verdict"]

    with ThreadPoolExecutor(8) as pool:  # verl's naive manager calls the entry from threads
        results = list(pool.map(one, range(samples)))
    return [r[0] for r in results], int(sum(r[1] for r in results))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=400)
    args = parser.parse_args()
    from judge_server import JudgeServer

    print(f"python {platform.python_version()}, {platform.machine()}, samples {args.samples}, 2 soft constraints each")
    with JudgeServer(p_yes=0.8) as server:
        run(server.url, 16, 5.0, 8)  # warm-up
        start = time.perf_counter()
        latencies, misses = run(server.url, args.samples, 5.0, 8)
        wall = time.perf_counter() - start
        cpu = time.process_time()
    q = statistics.quantiles(latencies, n=100)
    print(
        f"fast server: p50 {q[49] * 1e3:.1f} ms, p99 {q[98] * 1e3:.1f} ms, no-verdict {misses}/{args.samples}, "
        f"{args.samples / wall:.0f} samples/s wall"
    )
    with JudgeServer(p_yes=0.8, delay_s=1.0) as server:
        n = 32
        latencies, misses = run(server.url, n, 0.25, 8)
    print(f"server slower than the 0.25 s timeout: max latency {max(latencies) * 1e3:.0f} ms, no-verdict {misses}/{n}")
    with JudgeServer(p_yes=0.8) as server:
        cpu0, t0 = time.process_time(), time.perf_counter()
        run(server.url, args.samples, 5.0, 8)
        cpu1, t1 = time.process_time(), time.perf_counter()
    print(
        f"process CPU per judged sample (client + loopback server): {(cpu1 - cpu0) / args.samples * 1e3:.2f} ms "
        f"-> about {args.samples / (cpu1 - cpu0):.0f} samples per CPU-second; wall {args.samples / (t1 - t0):.0f}/s"
    )
    del cpu
    return 0


if __name__ == "__main__":
    sys.exit(main())
