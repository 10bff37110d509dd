"""The monitor's guarantee and cost, simulated and measured (issue 36).

    python benchmarks/bench_monitor.py [--streams 2000] [--seed 36] [--part all|guarantee|
                                        drift|segment|cost] [--lines 1000000]

* **guarantee**: streams of 20,000 enforced verdicts whose wrong-pass rate is exactly the
  promise (5%, the hardest case), 5% of passes spot-checked: the share of streams that *ever*
  raise an alarm (the monitor read after every verdict) against the promised false-alarm rate
  (5%), with its 95% binomial (Wilson) interval; beside it, on the same streams, a naive daily
  test of a 7-day window and a cumulative test re-run daily (both one-sided at 5%, exact
  binomial and normal approximation), and the share ever *certified* (promised at most 10%).
* **drift**: the wrong-pass rate doubles (5% to 10%) after a uniformly random number of
  verdicts in [0, 20,000); the median and 90th percentile number of spot checks after the
  change until the alarm, at sampling rates 1%, 2% and 5% (and the verdicts that takes); on
  the same streams, the anchor: Waudby-Smith and Ramdas' betting test of the spot checks in
  their order, with aGRAPA and predictable plug-in bets (``wsr_log_wealth``).
* **segment**: a segment of 10% of verdicts with a 20% wrong-pass rate, the rest at 3.06%
  (average 4.75%, within a 5% promise): how often the segment's own monitor raises the alarm
  and how often the pooled one does.
* **cost**: ``monitor_update`` per record at several stream lengths (O(1): flat), and reading a
  trail of ``--lines`` records with ``monitor`` against ``calibrate`` on the same files, as a
  ratio in the same run.

The simulations draw the spot checks' outcomes with numpy and evaluate the library's own test
(``_sequence.e_up`` / ``e_down``, vectorised here and checked against it on every run). An
alarm can only start at a spot check found wrong (between them the evidence only falls), and a
certificate only just before one or at the end, so the tests are evaluated there.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

from checkprofile.human._calibration import _sequence
from checkprofile.human._calibration._sequence import Counts

PROMISE = 0.05
ALPHA = 0.05
DELTA = 0.10
N = 20_000
PER_DAY = 200  # 100 days of 200 verdicts


def wilson(hits: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    share = hits / n
    middle = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, middle - half), min(1.0, middle + half)


def log_e_up(n: np.ndarray, k: np.ndarray, p: float, m: float) -> np.ndarray:
    """``_sequence.e_up`` for arrays of counts (no pending)."""
    q = p * m
    logs = []
    for r in _sequence.UP:
        q1 = min(r * q, (1 + q) / 2)
        logs.append(k * math.log(q1 / q) + (n - k) * (math.log1p(-q1) - math.log1p(-q)))
    stacked = np.stack(logs)
    top = stacked.max(axis=0)
    mixed: np.ndarray = top + np.log(np.exp(stacked - top).mean(axis=0))
    return mixed


def log_e_down(n: np.ndarray, k: np.ndarray, p: float, m: float) -> np.ndarray:
    q = p * m
    logs = []
    for r in _sequence.DOWN:
        q1 = q / r
        logs.append(k * math.log(q1 / q) + (n - k) * (math.log1p(-q1) - math.log1p(-q)))
    stacked = np.stack(logs)
    top = stacked.max(axis=0)
    mixed: np.ndarray = top + np.log(np.exp(stacked - top).mean(axis=0))
    return mixed


def _agree(rng: np.random.Generator, p: float) -> None:
    """The vectorised tests are the library's, on random counts."""
    for _ in range(200):
        n = int(rng.integers(1, 50_000))
        k = int(rng.integers(0, max(1, int(n * p * 0.3))))
        ours_up = float(log_e_up(np.array([n]), np.array([k]), p, PROMISE)[0])
        ours_down = float(log_e_down(np.array([n]), np.array([k]), p, PROMISE)[0])
        assert math.isclose(ours_up, _sequence.e_up(Counts(n, k, 0, p), PROMISE), abs_tol=1e-6)
        assert math.isclose(ours_down, _sequence.e_down(Counts(n, k, 0, p), PROMISE), abs_tol=1e-6)


def _binomial_critical(n: int, q: float, level: float) -> int:
    """The least c with P(Bin(n, q) >= c) <= level (an exact one-sided test)."""
    tail = 1.0
    c = 0
    pmf = (1 - q) ** n
    while tail > level:
        tail -= pmf
        c += 1
        pmf *= (n - c + 1) / c * q / (1 - q)
    return c


def guarantee(streams: int, seed: int, p: float = 0.05) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    _agree(rng, p)
    q = p * PROMISE
    need_up, need_down = math.log(1 / ALPHA), math.log(1 / DELTA)
    alarms = certified = 0
    days = N // PER_DAY
    window_exact = np.zeros(streams, bool)
    window_z = np.zeros(streams, bool)
    cumul_exact = np.zeros(streams, bool)
    cumul_z = np.zeros(streams, bool)
    crit_window = _binomial_critical(7 * PER_DAY, q, 0.05)
    crit_cumul = [_binomial_critical(d * PER_DAY, q, 0.05) for d in range(1, days + 1)]
    chunk = 250
    for start in range(0, streams, chunk):
        size = min(chunk, streams - start)
        hits = rng.random((size, N)) < q  # sampled and wrong
        cumulative = hits.cumsum(axis=1)
        for row in range(size):
            at = np.flatnonzero(hits[row]) + 1  # the verdict count at each wrong spot check
            k = np.arange(1, len(at) + 1)
            if len(at) and (log_e_up(at, k, p, PROMISE) >= need_up).any():
                alarms += 1
            before_n = np.append(at - 1, N)
            before_k = np.append(k - 1, len(at))
            if (log_e_down(before_n, before_k, p, PROMISE) >= need_down).any():
                certified += 1
        daily = cumulative[:, PER_DAY - 1 :: PER_DAY]  # k at the end of each day
        for d in range(days):
            n_cum = (d + 1) * PER_DAY
            k_cum = daily[:, d]
            cumul_exact[start : start + size] |= k_cum >= crit_cumul[d]
            cumul_z[start : start + size] |= _z_alarm(k_cum, n_cum, p)
            if d >= 6:
                k_win = k_cum - (daily[:, d - 7] if d >= 7 else 0)
                window_exact[start : start + size] |= k_win >= crit_window
                window_z[start : start + size] |= _z_alarm(k_win, 7 * PER_DAY, p)
    return {
        "streams": streams,
        "verdicts": N,
        "sampling": p,
        "monitor_alarm": _share(alarms, streams),
        "monitor_certified": _share(certified, streams),
        "window7_exact": _share(int(window_exact.sum()), streams),
        "window7_normal": _share(int(window_z.sum()), streams),
        "cumulative_exact": _share(int(cumul_exact.sum()), streams),
        "cumulative_normal": _share(int(cumul_z.sum()), streams),
    }


def _z_alarm(k: np.ndarray, n: int, p: float) -> np.ndarray:
    """A dashboard's test: the weighted estimate's one-sided 95% normal bound above the promise
    (the standard error from the estimate itself)."""
    estimate = k / (p * n)
    se = np.sqrt(np.maximum(estimate * (1 / p - estimate), 0) / n)
    return (estimate - 1.645 * se) > PROMISE


def _share(hits: int, n: int) -> dict[str, Any]:
    low, high = wilson(hits, n)
    return {"share": hits / n, "count": hits, "interval95": [low, high]}


def wsr_log_wealth(wrong: np.ndarray, m: float, bet: str) -> np.ndarray:
    """The anchor: Waudby-Smith and Ramdas' betting test of "the mean is at most ``m``" on the
    spot checks' outcomes in the order they came (``wrong``, 0/1), its log wealth after each.

    ``bet`` is ``"prpl"`` (their predictable plug-in, one-sided: ``λ_t = sqrt(2 log(1/α) /
    (σ̂²_{t-1} t log(1 + t)))``) or ``"agrapa"`` (their approximate growth-rate adaptive bet,
    ``λ_t = (μ̂_{t-1} - m) / (σ̂²_{t-1} + (μ̂_{t-1} - m)²)``), each kept in ``[0, c/m]`` with
    ``c = 1/2``, from their running estimates ``μ̂_t = (1/2 + Σ x) / (t + 1)`` and
    ``σ̂²_t = (1/4 + Σ (x_i - μ̂_i)²) / (t + 1)``. Unlike the library's test, the wealth depends
    on the order of the spot checks (so replicas must agree on one), which is what lets its bet
    adapt; it is a nonnegative supermartingale under the null all the same.
    """
    x = wrong.astype(float)
    t = np.arange(1, len(x) + 1)
    mean = (0.5 + np.cumsum(x)) / (t + 1)
    var = (0.25 + np.cumsum((x - mean) ** 2)) / (t + 1)
    mean_before = np.concatenate([[0.5], mean[:-1]])
    var_before = np.concatenate([[0.25], var[:-1]])
    if bet == "prpl":
        lam = np.sqrt(2 * math.log(1 / ALPHA) / (var_before * t * np.log1p(t)))
    else:
        edge = mean_before - m
        lam = edge / (var_before + edge**2)
    lam = np.clip(lam, 0.0, 0.5 / m)
    wealth: np.ndarray = np.cumsum(np.log1p(lam * (x - m)))
    return wealth


def drift(streams: int, seed: int, p: float) -> dict[str, Any]:
    """Spot checks after the change until the alarm, at sampling rate ``p``, for the library's
    test and, on the same streams, the Waudby-Smith and Ramdas anchors."""
    rng = np.random.default_rng(seed)
    need = math.log(1 / ALPHA)
    spot_checks: list[int] = []
    verdicts: list[int] = []
    anchors: dict[str, list[int]] = {"prpl": [], "agrapa": []}
    missed = 0
    for _ in range(streams):
        change = int(rng.integers(0, N))
        # Sampled verdicts before the change and after it, as gaps (geometric); the rate of a
        # wrong one among spot checks is the promise, then twice it.
        pre = np.cumsum(rng.geometric(p, size=int(change * p * 2) + 50))
        pre = pre[pre <= change]
        post = change + np.cumsum(rng.geometric(p, size=int(6000 + 4 / p)))
        positions = np.concatenate([pre, post])
        wrong = np.concatenate(
            [rng.random(len(pre)) < PROMISE, rng.random(len(post)) < 2 * PROMISE]
        )
        at = positions[wrong]
        k = np.arange(1, len(at) + 1)
        for bet, counted in anchors.items():
            hit = np.flatnonzero((wsr_log_wealth(wrong, PROMISE, bet) >= need)[len(pre) :])
            counted.append(int(hit[0]) + 1 if len(hit) else 10**9)
        found = np.flatnonzero((log_e_up(at, k, p, PROMISE) >= need) & (at > change))
        if not len(found):
            missed += 1
            continue
        alarm_at = at[found[0]]
        spot_checks.append(int(np.searchsorted(post, alarm_at, side="right")))
        verdicts.append(int(alarm_at - change))
    return {
        "sampling": p,
        "streams": streams,
        "missed_within_cap": missed,
        "spot_checks_median": float(np.median(spot_checks)),
        "spot_checks_p90": float(np.percentile(spot_checks, 90)),
        "verdicts_median": float(np.median(verdicts)),
        "verdicts_p90": float(np.percentile(verdicts, 90)),
        **{
            f"wsr_{bet}_spot_checks_median_p90": [
                float(np.median(counted)),
                float(np.percentile(counted, 90)),
            ]
            for bet, counted in anchors.items()
        },
    }


def segment(streams: int, seed: int, p: float = 0.05) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    need = math.log(1 / ALPHA)
    inside, rest, share = 0.20, (PROMISE * 0.95 - 0.1 * 0.20) / 0.9, 0.10
    caught = pooled = 0
    for _ in range(streams):
        member = rng.random(N) < share
        wrong = rng.random(N) < np.where(member, inside, rest)
        sampled = rng.random(N) < p
        hit = wrong & sampled
        pooled_at = np.flatnonzero(hit) + 1
        if (
            len(pooled_at)
            and (log_e_up(pooled_at, np.arange(1, len(pooled_at) + 1), p, PROMISE) >= need).any()
        ):
            pooled += 1
        seg_n = np.cumsum(member)
        seg_at = seg_n[hit & member]
        if (
            len(seg_at)
            and (log_e_up(seg_at, np.arange(1, len(seg_at) + 1), p, PROMISE) >= need).any()
        ):
            caught += 1
    return {
        "streams": streams,
        "average_rate": share * inside + (1 - share) * rest,
        "segment_rate": inside,
        "segment_caught": _share(caught, streams),
        "pooled_alarm": _share(pooled, streams),
    }


def cost(lines: int) -> dict[str, Any]:
    from bench_calibrate import _verdict

    from checkprofile.human import calibrate
    from checkprofile.human._audit._spot import SpotPlan
    from checkprofile.human._calibration._monitor import MonitorSettings, monitor, monitor_update

    plan = SpotPlan(passes=0.05, fails=0.05, secret=b"bench-monitor-secret-36")
    settings = MonitorSettings(plan=plan)
    folder = Path(tempfile.mkdtemp(prefix="bench-monitor-"))
    path = folder / "trail.jsonl"
    rng = random.Random(lines)
    start = datetime(2026, 11, 1, tzinfo=timezone.utc)
    written = 0
    with path.open("w", encoding="ascii") as out:
        n = 0
        while written < lines:
            at = (start + timedelta(seconds=n * 2)).strftime("%Y-%m-%dT%H:%M:%SZ")
            data = _verdict(rng, datetime.fromisoformat(at.replace("Z", "+00:00")))
            enforced = n % 2 == 1
            data["verdict"]["advisory"] = not enforced
            run = f"vendor-{n:08d}"
            digest = "sha256:" + f"{n:064x}"
            key = (
                "sha256:"
                + hashlib.sha256(
                    json.dumps([run, data["step"], digest], separators=(",", ":")).encode()
                ).hexdigest()
            )
            data.update(run=run, key=key, submission_sha256=digest)
            out.write(json.dumps(data, separators=(",", ":")) + "\n")
            written += 1
            verdict = data["verdict"]["verdict"]
            tag = plan.draw_key(key, verdict) if enforced else None
            decided = {"kind": "completed", "by": "pat", "at": at}
            if tag is not None:
                out.write(
                    json.dumps(
                        {
                            "record": "spot_check",
                            "format": 1,
                            "key": key,
                            "run": run,
                            "step": data["step"],
                            "submission_sha256": digest,
                            "verdict": verdict,
                            "verdict_at": at,
                            "probability": plan.rate(verdict),
                            "sample": tag,
                            "accepted": True,
                            "decision": decided,
                        },
                        separators=(",", ":"),
                    )
                    + "\n"
                )
                written += 1
            elif not enforced:
                out.write(
                    json.dumps(
                        {
                            "record": "decision",
                            "format": 1,
                            "key": key,
                            "run": run,
                            "step": data["step"],
                            "submission_sha256": digest,
                            "escalated_at": None,
                            "accepted": True,
                            "decision": decided,
                        },
                        separators=(",", ":"),
                    )
                    + "\n"
                )
                written += 1
            n += 1
    began = time.process_time()
    calibrate(path)
    calibrate_seconds = time.process_time() - began
    began = time.process_time()
    report = monitor(path, settings=settings)
    monitor_seconds = time.process_time() - began
    # O(1): the time of one update at growing stream lengths (the state carries counts).
    state: Any = None
    per_update = {}
    from checkprofile import Submission, YesNoAnswer, combine, outcome_for, parse_check
    from checkprofile.human import verdict_record

    check = parse_check([{"ask": "ok?", "pass": 0.9, "fail": 0.5}])
    made = [
        verdict_record(
            outcome_for(
                combine(
                    check,
                    (YesNoAnswer(0.95),),
                    model="m",
                    at="2026-11-01T00:00:00Z",
                    advisory=False,
                )
            ),
            run_id=f"r{i}",
            step_id="s",
            submission=Submission({"i": i}),
        )
        for i in range(2000)
    ]
    fed = 0
    for target in (1_000, 10_000, 100_000):
        while fed < target:
            state, _ = monitor_update(state, made[fed % 2000 : fed % 2000 + 1], settings=settings)
            state["steps"]["s"]["pending"].clear()  # a person reviewed them
            fed += 1
        began = time.perf_counter()
        for i in range(500):
            monitor_update(state, made[i : i + 1], settings=settings)
        per_update[target] = (time.perf_counter() - began) / 500
    path.unlink()
    folder.rmdir()
    return {
        "lines": written,
        "calibrate_cpu_seconds": calibrate_seconds,
        "monitor_cpu_seconds": monitor_seconds,
        "ratio_monitor_over_calibrate": monitor_seconds / calibrate_seconds,
        "monitor_status": report.status,
        "update_seconds_at": per_update,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument(
        "--part", choices=("all", "guarantee", "drift", "segment", "cost"), default="all"
    )
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    if args.part in ("all", "guarantee"):
        results["guarantee"] = guarantee(args.streams, args.seed)
        print(json.dumps({"guarantee": results["guarantee"]}, indent=1), flush=True)
    if args.part in ("all", "drift"):
        results["drift"] = [
            drift(max(1000, args.streams // 2), args.seed + i, p)
            for i, p in enumerate((0.01, 0.02, 0.05))
        ]
        print(json.dumps({"drift": results["drift"]}, indent=1), flush=True)
    if args.part in ("all", "segment"):
        results["segment"] = segment(max(1000, args.streams // 2), args.seed)
        print(json.dumps({"segment": results["segment"]}, indent=1), flush=True)
    if args.part in ("all", "cost"):
        results["cost"] = cost(args.lines)
        print(json.dumps({"cost": results["cost"]}, indent=1), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
