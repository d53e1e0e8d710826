#!/usr/bin/env python3
"""iolens calibrate vs fio on the same file, in one invocation.

Runs `iolens calibrate` once, then fio at the two points calibrate chose (the
outstanding I/Os of max_iops with 8k random reads, and of max_mbps with 1m
random reads: same workers × queue depth, io_uring, direct I/O), and prints
each figure from both tools with the ratio iolens/fio. fio is the peer that
says whether the figure calibrate reports at a point is the figure the device
gives at that point; the ladder's choice of point is calibrate's own.

Keeps the raw figures with the exact commands and the environment under
bench/results/.

On a noisy device (a virtual disk served from the host's page cache) the
two tools' figures differ by the device's own run-to-run spread; for a
deterministic comparison, run both inside a blkio cgroup with known read
limits on a loop device (--cgroup DIR: each tool is started by a shell that
first joins DIR/cgroup.procs).

usage: bench/calibrate_vs_fio.py [--file PATH] [--size 2g] [--trials 3] [--runtime 10]
                                 [--cgroup DIR] [--large-bs 1m] [--iolens BIN]
"""
import argparse, json, os, platform, shutil, stat, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


CGROUP = None


def sh(cmd):
    if CGROUP:
        cmd = ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', CGROUP] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"command failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    return p.stdout


def fio(path, size, bs, threads, qd, runtime):
    cmd = ["fio", "--name=bench", "--output-format=json", "--time_based", f"--runtime={runtime}",
           f"--filename={path}"] + ([f"--size={size}"] if size else []) + [
           "--rw=randread", f"--bs={bs}", "--ioengine=io_uring",
           f"--iodepth={qd}", f"--numjobs={threads}", "--direct=1", "--group_reporting",
           "--randrepeat=0", "--norandommap", "--registerfiles=1", "--fixedbufs=1"]
    r = json.loads(sh(cmd))["jobs"][0]["read"]
    return cmd, {"iops": r["iops"], "mbps": r["bw_bytes"] / 1e6, "lat_mean_ms": r["lat_ns"]["mean"] / 1e6}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", default=os.path.join(ROOT, "target", "bench-calibrate.dat"))
    ap.add_argument("--size", default="2g")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=10)
    ap.add_argument("--cgroup", help="run both tools inside this cgroup directory (v1 blkio or v2)")
    ap.add_argument("--large-bs", default="1m")
    ap.add_argument("--iolens", default=os.path.join(ROOT, "target", "release", "iolens"))
    a = ap.parse_args()
    global CGROUP
    CGROUP = a.cgroup
    device = os.path.exists(a.file) and stat.S_ISBLK(os.stat(a.file).st_mode)
    size = None if device else a.size
    if not shutil.which("fio"):
        sys.exit("fio is not installed: apt-get install -y fio")
    if not os.path.exists(a.iolens):
        sh(["cargo", "build", "--release", "--quiet", "--manifest-path", os.path.join(ROOT, "Cargo.toml")])
    os.makedirs(os.path.dirname(os.path.abspath(a.file)), exist_ok=True)
    with tempfile.TemporaryDirectory() as t:
        cal_cmd = [a.iolens, "calibrate", "--quiet", "--json", "--target", a.file,
                   "--large-bs", a.large_bs, "--trials", str(a.trials), "--output", os.path.join(t, "r")]
        if size:
            cal_cmd += ["--size", size]
        t0 = time.monotonic()
        doc = json.loads(sh(cal_cmd))
        cal_s = time.monotonic() - t0
    s, trial = doc["summary"], doc["trials"][0]

    def step(io, outstanding):
        return next(p for p in doc["ladder"] if p["trial"] == 1 and p["io"] == io and p["outstanding"] == outstanding)

    small = step("small", trial["iops_outstanding"])
    large = step("large", trial["mbps_outstanding"])
    fio_small_cmd, fio_small = fio(a.file, size, "8k", small["threads"], small["qd"], a.runtime)
    fio_large_cmd, fio_large = fio(a.file, size, a.large_bs, large["threads"], large["qd"], a.runtime)
    rows = [
        ("max_iops (8k, %d×%d)" % (small["threads"], small["qd"]), s["max_iops"], fio_small["iops"]),
        ("latency ms (trial 1)", trial["latency_ms"], fio_small["lat_mean_ms"]),
        ("max_mbps (%s, %d×%d)" % (a.large_bs, large["threads"], large["qd"]), s["max_mbps"], fio_large["mbps"]),
    ]
    print(f"{'figure':<28} {'iolens':>10} {'fio':>10} {'ratio':>7}")
    for name, i, f in rows:
        print(f"{name:<28} {i:>10.3f} {f:>10.3f} {i / f:>7.3f}")
    print(f"calibrate: {a.trials} trial(s) in {cal_s:.1f} s, CV max_iops {s['cv']['max_iops']} %, "
          f"max_mbps {s['cv']['max_mbps']} %")
    env = {"kernel": platform.release(), "cpus": os.cpu_count(), "fio": sh(["fio", "--version"]).strip(),
           "iolens": sh([a.iolens, "--version"]).strip(), "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "argv": sys.argv, "cgroup": a.cgroup}
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    out = os.path.join(HERE, "results", f"calibrate_vs_fio-{time.strftime('%Y%m%dT%H%M%S')}.json")
    with open(out, "w") as fh:
        json.dump({"env": env, "calibrate": {"command": " ".join(cal_cmd), "seconds": cal_s, "summary": s,
                                             "trials": doc["trials"]},
                   "fio": {"small": {"command": " ".join(fio_small_cmd), **fio_small},
                           "large": {"command": " ".join(fio_large_cmd), **fio_large}},
                   "rows": rows}, fh, indent=1)
    print(f"raw figures: {out}")


if __name__ == "__main__":
    main()
