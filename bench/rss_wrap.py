"""Runs a Python script (python3 rss_wrap.py SCRIPT ARGS...) and at exit writes its peak RSS
in KB and its CPU time (user + system) in microseconds, space-separated, to the file named by $TRACES_BENCH_RSS_FILE. The Python twin of rss-preload.mjs."""
import atexit
import os
import resource
import runpy
import sys


def _dump():
    path = os.environ.get("TRACES_BENCH_RSS_FILE")
    if path:
        with open(path, "w") as f:
            usage = resource.getrusage(resource.RUSAGE_SELF)
            f.write(f"{usage.ru_maxrss} {round((usage.ru_utime + usage.ru_stime) * 1e6)}")


atexit.register(_dump)
script = sys.argv[1]
sys.argv = sys.argv[1:]
# As `python3 SCRIPT` would: the script's folder first on the path (the baselines share tracetree.py).
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
runpy.run_path(script, run_name="__main__")
