#!/usr/bin/env python3
"""iolens vs fio on the same file, alternately, in one invocation.

Cases (the issue's acceptance points):
  a) 4 KiB random read, io_uring, QD 32, 1 worker
  b) 8 KiB random read, psync, QD 1, 1 worker
  c) null engine, 1 worker (per-I/O overhead of the tool itself)

Prints, per case, IOPS and CPU microseconds per I/O of each tool and the
ratios iolens/fio, and keeps the raw figures with the exact commands and the
environment under bench/results/.

usage: bench/raw_vs_fio.py [--file PATH] [--size 2g] [--runtime 10] [--rounds 2] [--iolens BIN]
"""
import argparse, json, os, platform, shutil, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def sh(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"command failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    return p.stdout


def fio_cmd(case, path, size, runtime):
    c = ["fio", "--name=bench", "--output-format=json", "--time_based", f"--runtime={runtime}",
         "--numjobs=1", "--randrepeat=0", "--norandommap", "--rw=randread", "--group_reporting"]
    if case == "a":
        c += [f"--filename={path}", f"--size={size}", "--bs=4k", "--ioengine=io_uring", "--iodepth=32",
              "--direct=1", "--registerfiles=1", "--fixedbufs=1", "--iodepth_batch_submit=32",
              "--iodepth_batch_complete_min=1"]
    elif case == "b":
        c += [f"--filename={path}", f"--size={size}", "--bs=8k", "--ioengine=psync", "--iodepth=1", "--direct=1"]
    else:
        c += ["--size=1g", "--bs=4k", "--ioengine=null", "--iodepth=1"]
    return c


def iolens_cmd(binary, case, path, size, runtime, out):
    c = [binary, "run", "--quiet", "--json", "--output", out, "--runtime", f"{runtime}s", "--rw", "randread"]
    if case == "a":
        c += ["--target", path, "--size", size, "--bs", "4k", "--engine", "io_uring", "--qd", "32"]
    elif case == "b":
        c += ["--target", path, "--size", size, "--bs", "8k", "--engine", "psync", "--qd", "1"]
    else:
        c += ["--engine", "null", "--bs", "4k", "--size", "1g"]
    return c


def run_fio(cmd):
    j = json.loads(sh(cmd))["jobs"][0]
    ios = j["read"]["total_ios"]
    rt = j["read"]["runtime"] / 1000.0 or j["job_runtime"] / 1000.0
    cpu_s = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * (j["job_runtime"] / 1000.0)
    return {"iops": j["read"]["iops"], "cpu_us_per_io": cpu_s * 1e6 / max(ios, 1), "ios": ios, "runtime_s": rt,
            "lat_mean_us": j["read"]["lat_ns"]["mean"] / 1e3}


def run_iolens(cmd):
    s = json.loads(sh(cmd))["summary"]
    ops = s["total"]["ops"]
    cpu = s["cpu"]["user_s"] + s["cpu"]["sys_s"]
    return {"iops": s["total"]["iops"], "cpu_us_per_io": cpu * 1e6 / max(ops, 1), "ios": ops,
            "runtime_s": s["measured_s"], "lat_mean_us": s["read"]["lat_us"]["mean"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", default=os.path.join(ROOT, "target", "bench-raw.dat"))
    ap.add_argument("--size", default="2g")
    ap.add_argument("--runtime", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--iolens", default=os.path.join(ROOT, "target", "release", "iolens"))
    ap.add_argument("--cases", default="abc")
    a = ap.parse_args()
    if not shutil.which("fio"):
        sys.exit("fio is not installed: apt-get install -y fio")
    if not os.path.exists(a.iolens):
        sh(["cargo", "build", "--release", "--quiet", "--manifest-path", os.path.join(ROOT, "Cargo.toml")])
    os.makedirs(os.path.dirname(os.path.abspath(a.file)), exist_ok=True)
    if not os.path.exists(a.file):
        # Let iolens create (and fully write) the file once; both tools then read it.
        with tempfile.TemporaryDirectory() as t:
            sh([a.iolens, "run", "--quiet", "--target", a.file, "--size", a.size, "--engine", "null",
                "--runtime", "1s", "--output", os.path.join(t, "r")])
    names = {"a": "4k randread io_uring QD32", "b": "8k randread psync QD1", "c": "null engine"}
    results = {}
    for case in a.cases:
        runs = {"fio": [], "iolens": []}
        cmds = {}
        for r in range(a.rounds):
            order = ["fio", "iolens"] if r % 2 == 0 else ["iolens", "fio"]
            for tool in order:
                if tool == "fio":
                    cmd = fio_cmd(case, a.file, a.size, a.runtime)
                    runs["fio"].append(run_fio(cmd))
                else:
                    with tempfile.TemporaryDirectory() as t:
                        cmd = iolens_cmd(a.iolens, case, a.file, a.size, a.runtime, os.path.join(t, "r"))
                        runs["iolens"].append(run_iolens(cmd))
                cmds[tool] = " ".join(cmd)
        med = {t: {k: statistics.median(x[k] for x in v) for k in v[0]} for t, v in runs.items()}
        results[case] = {"name": names[case], "runs": runs, "median": med, "commands": cmds,
                         "iops_ratio": med["iolens"]["iops"] / med["fio"]["iops"],
                         "cpu_per_io_ratio": med["iolens"]["cpu_us_per_io"] / med["fio"]["cpu_us_per_io"]}
    print(f"{'case':<28} {'fio IOPS':>12} {'iolens IOPS':>12} {'ratio':>7}   {'fio CPU/IO':>10} {'iolens CPU/IO':>13} {'ratio':>7}")
    for case, r in results.items():
        f, i = r["median"]["fio"], r["median"]["iolens"]
        print(f"{r['name']:<28} {f['iops']:>12.0f} {i['iops']:>12.0f} {r['iops_ratio']:>7.2f}   "
              f"{f['cpu_us_per_io']:>9.3f}us {i['cpu_us_per_io']:>12.3f}us {r['cpu_per_io_ratio']:>7.2f}")
    env = {"kernel": platform.release(), "cpus": os.cpu_count(), "fio": sh(["fio", "--version"]).strip(),
           "iolens": sh([a.iolens, "--version"]).strip(), "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "argv": sys.argv}
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    out = os.path.join(HERE, "results", f"raw_vs_fio-{time.strftime('%Y%m%dT%H%M%S')}.json")
    with open(out, "w") as f:
        json.dump({"env": env, "results": results}, f, indent=1)
    print(f"raw figures: {out}")


if __name__ == "__main__":
    main()
