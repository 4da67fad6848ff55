"""slaq.client — a training job's side of the slaqd protocol, in pure Python.

The same calls as the C library (include/slaq/client.h): report an
iteration, read the current allocation in cores, ask whether to stop. The
socket is non-blocking and every call only does the I/O that is possible
at once, so the training loop never waits for slaqd. Without a slaqd the
client works offline: reports are dropped (and counted), ``cores()``
returns the default allocation, and a reconnect is tried at most once a
second. The wire protocol is described in docs/protocol.md.

Reports are kept until slaqd confirms they are in its database (an
``ack``); after a reconnection (slaqd killed and restarted, say) they are
sent again right after the hello, and slaqd drops those it has, so none
is lost and none is stored twice. With a slaqd that does not confirm, a report is
forgotten once queued on the socket, as before.

    import slaq
    job = slaq.Client()                  # SLAQ_SOCKET / SLAQ_JOB_ID
    for it in range(1, 1000):
        torch.set_num_threads(job.threads())
        loss = train_one_epoch()
        job.report(it, loss)             # CPU time measured for you
        if job.should_stop():
            break
    job.close()
"""

import collections
import errno
import json
import math
import os
import select
import socket
import sys
import time

__all__ = ["Client", "threads_for"]

_MAX_WBUF = 1024 * 1024
_MAX_LINE = 64 * 1024
_RETRY_S = 1.0
_MAX_UNACKED = 65536  # reports kept until slaqd confirms them


def threads_for(cores, cpus=None):
    """slaq's thread rule: the worker threads to run for ``cores`` cores.

    max(1, floor(cores + 0.25)), at most ``cpus`` (default: the online
    CPUs; taken as 1 when below 1): 0.1 to 1.74 cores give 1 thread, 1.75
    give 2. The same function as slaq_client_threads_for() in C, with the
    same answers (docs/client.md gives the reasons).
    """
    if cpus is None:
        cpus = os.cpu_count() or 1
    cpus = max(1, int(cpus))
    cores = float(cores)
    if not cores + 0.25 >= 1:  # also NaN
        return 1
    if cores + 0.25 >= cpus:
        return cpus
    return int(math.floor(cores + 0.25))


def _default_cores():
    env = os.environ.get("SLAQ_DEFAULT_CORES")
    try:
        value = float(env) if env else 0.0
    except ValueError:
        value = 0.0
    if value > 0 and math.isfinite(value):
        return value
    return float(os.cpu_count() or 1)



def _cells(name, values):
    """A report's estimate or bound cells: finite floats or None."""
    out = []
    for k, v in enumerate(values):
        if v is None:
            out.append(None)
            continue
        v = float(v)
        if not math.isfinite(v):
            raise ValueError("%s[%d] must be a finite number or None, got %r"
                             % (name, k, v))
        out.append(v)
    if not out:
        raise ValueError("%s must have at least one cell" % name)
    return out

class Client:
    """A connection from one training job to slaqd.

    socket_path: the slaqd socket (default: $SLAQ_SOCKET; None or empty
        means offline; "tcp:HOST:PORT" for a slaqd with --tcp, the job
        token (--job-token-file) then comes from $SLAQ_TOKEN and is sent
        in clear; slaqd takes the control token only in a sealed session,
        which this client does not speak). job_id: this job's id (default: $SLAQ_JOB_ID); when
        there is none the process attaches itself as a new job called
        ``name`` (default $SLAQ_JOB_NAME or the script's name).
        default_cores: what ``cores()`` returns until slaqd has given an
        allocation (default $SLAQ_DEFAULT_CORES, else the online CPUs).
        iters: how many iterations the job will run (see ``set_iters``).
        convergence: the algorithm's convergence class (see
        ``set_convergence``).
        metric_name: what the reports' ``metric`` is (see
        ``set_metric_name``).
    """

    # The classes slaqd accepts (slaq_convergence_parse).
    CONVERGENCE = ("sublinear", "linear", "superlinear", "nonconvex",
                   "unknown")

    def __init__(self, socket_path=None, job_id=None, name=None,
                 default_cores=None, iters=None, convergence=None,
                 metric_name=None):
        if socket_path is None:
            socket_path = os.environ.get("SLAQ_SOCKET")
        if job_id is None:
            env_id = os.environ.get("SLAQ_JOB_ID", "")
            job_id = int(env_id) if env_id.isdigit() else 0
        if name is None:
            name = os.environ.get("SLAQ_JOB_NAME") or os.path.basename(
                sys.argv[0] or "python")
        self._path = socket_path or None
        self._addr = None
        self._family = socket.AF_UNIX
        self._token = None
        if self._path and self._path.startswith("tcp:"):
            host, _, port = self._path[4:].rpartition(":")
            try:
                info = socket.getaddrinfo(host, int(port), 0,
                                          socket.SOCK_STREAM)[0]
                self._family, self._addr = info[0], info[4]
                self._token = os.environ.get("SLAQ_TOKEN")
            except (OSError, ValueError):
                self._path = None  # unusable address: offline
        else:
            self._addr = self._path
        self._connecting = False
        self._job_id = int(job_id or 0)
        # Proves the job is ours: a started job's is in its environment,
        # an attached job's comes in welcome (for its reconnections).
        self._secret = os.environ.get("SLAQ_JOB_SECRET") or None
        self._name = name
        self._sock = None
        self._welcomed = False
        self._default = _default_cores()
        if default_cores is not None and float(default_cores) > 0 and \
                math.isfinite(float(default_cores)):
            self._default = float(default_cores)
        self._cores = self._default
        self._stop_reason = None
        self._iters = 0
        self._metric_name = None
        if iters is not None:
            self.set_iters(iters)
        self._convergence = None
        if convergence is not None:
            self.set_convergence(convergence)
        if metric_name is not None:
            self.set_metric_name(metric_name)
        self._last_try = None
        self._wbuf = bytearray()
        self._rbuf = bytearray()
        self._dropped = 0
        # Reports not yet confirmed, oldest first: (iter, line).
        self._unacked = collections.deque()
        self._sent = 0       # of them, queued on this connection
        self._acks = None    # the last welcome said slaqd confirms (True)
        # or not (False); None before any welcome: reports are kept
        self._acked = -1     # the last iteration confirmed
        self._refused = False  # the last connect was refused (a slaqd
        # restarting), so reports are kept before the first welcome
        self._cpu_prev = time.process_time()
        self._advice = None      # the threads slaqd advises (None: none yet)
        self._threads_used = None  # what threads() last returned
        self._wall_prev = None   # monotonic time of the previous report
        self.poll()

    # ------------------------------------------------------------ public

    def report(self, iteration, loss, cpu_s=None, samples=0.0, metric=None,
               estimates=None, lower=None, upper=None):
        """Reports the state after ``iteration`` (strictly increasing).

        metric: the job's quality metric after this iteration (validation
        accuracy, RMSE...; name it with ``set_metric_name``), or None when
        not measured at this iteration.
        estimates: for an approximate query (docs/relaqs.md), the current
        estimate of every result cell, in a fixed order, None for a cell
        with no value yet; a first report with estimates makes the job a
        query, and every later one must carry as many. lower, upper: the
        cells' error bounds, each as long as estimates (or None).
        cpu_s: CPU-seconds used since the previous report; by default the
        process's own CPU time since then (all threads). The report also
        carries the wall time since the previous report and the threads
        the iterations ran (what ``threads()`` last returned, or
        ``set_threads`` said). Returns True when
        the report was queued (kept until slaqd confirms it, and sent again
        after a reconnection), False when it was dropped: slaqd is not
        reachable (and the last one did not confirm reports, or, before
        any answer, its socket is not there at all) or 65,536 reports
        already wait. Raises ValueError on a non-finite loss or a
        negative cpu_s or samples.
        """
        now_cpu = time.process_time()
        now_wall = time.monotonic()
        wall_s = now_wall - self._wall_prev if self._wall_prev else 0.0
        self._wall_prev = now_wall
        if cpu_s is None:
            cpu_s = max(0.0, now_cpu - self._cpu_prev)
        self._cpu_prev = now_cpu
        loss, cpu_s, samples = float(loss), float(cpu_s), float(samples)
        if not math.isfinite(loss):
            raise ValueError("loss must be a finite number, got %r" % loss)
        if not (cpu_s >= 0 and math.isfinite(cpu_s)):
            raise ValueError("cpu_s must be >= 0, got %r" % cpu_s)
        if not (samples >= 0 and math.isfinite(samples)):
            raise ValueError("samples must be >= 0, got %r" % samples)
        if int(iteration) < 0:
            raise ValueError("iteration must be >= 0")
        if metric is not None:
            metric = float(metric)
            if not math.isfinite(metric):
                raise ValueError("metric must be a finite number, got %r"
                                 % metric)
        cells = {}
        for name, v in (("estimates", estimates), ("lower", lower),
                        ("upper", upper)):
            if v is not None:
                cells[name] = _cells(name, v)
        if cells and "estimates" not in cells:
            raise ValueError("lower and upper need estimates")
        for name in ("lower", "upper"):
            if name in cells and len(cells[name]) != len(cells["estimates"]):
                raise ValueError("%s has %d cells, estimates %d" % (
                    name, len(cells[name]), len(cells["estimates"])))
        self.poll()
        if (self._sock is None and not self._keep_offline()) or \
                len(self._unacked) >= _MAX_UNACKED:
            self._dropped += 1
            return False
        msg = {"type": "report", "iter": int(iteration), "loss": loss,
               "cpu_s": cpu_s, "samples": samples}
        if metric is not None:
            msg["metric"] = metric
        if self._threads_used:
            msg["threads"] = self._threads_used
        if wall_s > 0:
            msg["wall_s"] = wall_s
        msg.update(cells)
        line = json.dumps(msg, separators=(",", ":"))
        self._unacked.append((int(iteration), line))
        self._pump()
        self._write()
        return True

    def set_iters(self, iters):
        """Tells slaqd how many iterations the job will run (its epochs):
        the end of its loss curve, against which its loss reduction, time
        to 90% and --target-reduction stops are measured."""
        iters = int(iters)
        if iters <= 0 or iters == self._iters:
            return
        self._iters = iters
        if getattr(self, "_sock", None) is not None:
            self._queue(json.dumps({"type": "info", "iters": iters},
                                   separators=(",", ":")))

    def set_convergence(self, cls):
        """Tells slaqd the algorithm's convergence class, as ``slaq submit
        --convergence`` does: "sublinear" (SGD, gradient descent, K-Means),
        "linear" or "superlinear" (L-BFGS, Newton), "nonconvex" or
        "unknown". slaq-fit then fits only that class's curve family.
        Raises ValueError for any other name."""
        if cls not in self.CONVERGENCE:
            raise ValueError("convergence must be one of %s, got %r"
                             % (", ".join(self.CONVERGENCE), cls))
        if cls == self._convergence:
            return
        self._convergence = cls
        if getattr(self, "_sock", None) is not None:
            self._queue(json.dumps({"type": "info", "convergence": cls},
                                   separators=(",", ":")))

    def set_metric_name(self, name):
        """Names the metric the reports carry ("accuracy", "rmse"...):
        1 to 64 bytes without control characters (else ValueError)."""
        name = str(name)
        raw = name.encode()
        if not 1 <= len(raw) <= 64 or any(b < 0x20 or b == 0x7f
                                          for b in raw):
            raise ValueError("metric name must be 1 to 64 bytes without "
                             "control characters, got %r" % name)
        if name == self._metric_name:
            return
        self._metric_name = name
        if getattr(self, "_sock", None) is not None:
            self._queue(json.dumps({"type": "info", "metric_name": name},
                                   separators=(",", ":")))

    def cores(self):
        """The current allocation in cores (fractional); the default
        allocation until slaqd has said otherwise."""
        self.poll()
        return self._cores

    def threads(self):
        """The worker threads to run for the current allocation: slaqd's
        advice, the count with the best measured speed on the job's share
        (docs/client.md, "Threads"), never more than
        ``threads_for(self.cores())``, slaq's thread rule, which is all it
        is before slaqd has advised. Call it at the start of every
        iteration: the reports then tell slaqd that the iterations ran
        this many threads, and their wall time, which is what the advice
        is measured from."""
        t = threads_for(self.cores())
        if self._advice is not None:
            t = min(t, self._advice)
        self._threads_used = t
        return t

    def set_threads(self, threads):
        """For a job that sizes its thread pools itself: the threads its
        next reports' iterations run (>= 1; else ignored)."""
        if int(threads) >= 1:
            self._threads_used = int(threads)

    def should_stop(self):
        """True once slaqd asked this job to stop."""
        self.poll()
        return self._stop_reason is not None

    @property
    def stop_reason(self):
        """Why the job was asked to stop, or None."""
        return self._stop_reason

    @property
    def connected(self):
        return self._sock is not None and not self._connecting and \
            self._welcomed

    @property
    def job_id(self):
        """This job's id, or 0 while not known."""
        return self._job_id

    @property
    def dropped(self):
        """Reports dropped because slaqd was not reachable."""
        return self._dropped

    @property
    def unacked(self):
        """Reports not yet confirmed by slaqd (or not yet written, with a
        slaqd that does not confirm)."""
        return len(self._unacked) - (self._sent if self._acks is False else 0)

    @property
    def acked(self):
        """The last iteration slaqd confirmed as committed, or -1."""
        return self._acked

    def poll(self):
        """Does whatever I/O is possible now, without blocking."""
        self._try_connect()
        self._pump()
        self._write()
        self._read()
        if self._wbuf:  # what the welcome released, say
            self._write()

    def close(self, timeout=1.0):
        """Waits at most ``timeout`` s for every report to be confirmed
        (reconnecting if need be), says goodbye and disconnects."""
        deadline = time.monotonic() + timeout
        while self._path is not None and self.unacked and \
                time.monotonic() < deadline:
            self.poll()
            if self._sock is not None and not self._connecting:
                select.select([self._sock], [self._sock] if self._wbuf
                              else [], [], 0.01)
            else:
                time.sleep(0.01)
        if self._sock is not None and not self._connecting:
            self._queue('{"type":"bye"}')
            self._write()
            while self._sock is not None and self._wbuf and \
                    time.monotonic() < deadline:
                time.sleep(0.005)
                self._write()
        self._disconnect()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # ----------------------------------------------------------- private

    def _disconnect(self):
        if self._sock is not None:
            self._sock.close()
        self._sock = None
        self._connecting = False
        self._welcomed = False
        self._wbuf.clear()
        self._rbuf.clear()
        self._sent = 0  # what was queued went with the socket

    def _keep_offline(self):
        """Whether a report made while offline is kept for the next
        connection: the last slaqd confirmed reports, or none has answered
        yet and the address refuses connections (a socket nobody serves:
        its slaqd was killed and is starting again). Where there is no
        slaqd at all (no such socket) reports are dropped."""
        if os.environ.get("SLAQ_CLIENT_ACK") == "0":
            return False
        return self._acks is True or (self._acks is None and self._refused)

    def _log_acks(self, iters):
        """Appends "JOB ITER" for each report an ack confirmed to
        $SLAQ_CLIENT_ACK_LOG (opt-in, for kill -9 soaks: tests/soak), in one
        O_APPEND write so that jobs sharing the file keep their lines
        whole. Best effort: the log never fails the job."""
        path = os.environ.get("SLAQ_CLIENT_ACK_LOG")
        if not path or not iters:
            return
        data = "".join("%d %d\n" % (self._job_id, i) for i in iters)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, data.encode())
            finally:
                os.close(fd)
        except OSError:
            pass

    def _queue(self, line):
        data = line.encode() + b"\n"
        if len(self._wbuf) + len(data) > _MAX_WBUF:
            return False
        self._wbuf += data
        return True

    def _pump(self):
        """Queues the kept reports not yet on this connection (after the
        hello), oldest first."""
        if self._sock is None:
            return
        while self._sent < len(self._unacked):
            if not self._queue(self._unacked[self._sent][1]):
                break
            self._sent += 1
        if self._acks is False:  # nobody will confirm them
            for _ in range(self._sent):
                self._unacked.popleft()
            self._sent = 0

    def _try_connect(self):
        if self._path is None or self._sock is not None:
            return
        now = time.monotonic()
        if self._last_try is not None and now - self._last_try < _RETRY_S:
            return
        self._last_try = now
        sock = socket.socket(self._family, socket.SOCK_STREAM)
        sock.setblocking(False)
        if self._family != socket.AF_UNIX:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            err = sock.connect_ex(self._addr)
        except OSError as e:  # a Unix socket path that cannot be used
            err = e.errno
        if err == errno.EINPROGRESS:
            self._connecting = True  # finished in _write
        elif err != 0:
            self._refused = err == errno.ECONNREFUSED
            sock.close()
            return
        self._sock = sock
        hello = {"type": "hello", "version": 1, "pid": os.getpid(),
                 "name": self._name}
        if self._job_id:
            hello["job"] = self._job_id
            if self._secret:
                hello["secret"] = self._secret
        if self._token:
            hello["token"] = self._token
        if self._iters:
            hello["iters"] = self._iters
        if self._convergence:
            hello["convergence"] = self._convergence
        if os.environ.get("SLAQ_CLIENT_ACK") != "0":
            hello["ack"] = True
        if self._metric_name:
            hello["metric_name"] = self._metric_name
        self._queue(json.dumps(hello, separators=(",", ":")))

    def _write(self):
        if self._sock is not None and self._connecting:
            if not select.select([], [self._sock], [], 0)[1]:
                return  # still connecting
            err = self._sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                self._refused = err == errno.ECONNREFUSED
                self._disconnect()
                return
            self._connecting = False
        while self._sock is not None and self._wbuf:
            try:
                n = self._sock.send(self._wbuf)
            except BlockingIOError:
                return
            except InterruptedError:
                continue
            except OSError:
                self._disconnect()
                return
            del self._wbuf[:n]

    def _read(self):
        while self._sock is not None and not self._connecting:
            try:
                data = self._sock.recv(65536)
            except BlockingIOError:
                return
            except InterruptedError:
                continue
            except OSError:
                self._disconnect()
                return
            if not data:
                self._disconnect()
                return
            self._rbuf += data
            while True:
                nl = self._rbuf.find(b"\n")
                if nl < 0:
                    break
                line = bytes(self._rbuf[:nl])
                del self._rbuf[:nl + 1]
                self._message(line)
            if len(self._rbuf) > _MAX_LINE:
                self._rbuf.clear()

    def _take_advice(self, msg):
        """The thread advice of a welcome or alloc message (a slaqd that
        gives none leaves the thread rule alone)."""
        t = msg.get("threads")
        if isinstance(t, int) and not isinstance(t, bool) and t >= 1:
            self._advice = t

    def _message(self, line):
        try:
            msg = json.loads(line)
        except ValueError:
            return
        if not isinstance(msg, dict):
            return
        kind = msg.get("type")
        cores = msg.get("cores")
        if kind == "welcome":
            self._welcomed = True
            if isinstance(msg.get("job"), int):
                self._job_id = msg["job"]
            if isinstance(msg.get("secret"), str):
                self._secret = msg["secret"]
            if isinstance(cores, (int, float)) and cores > 0:
                self._cores = float(cores)
            self._take_advice(msg)
            # The kept reports went out after the hello already (slaqd
            # drops those it has); they stay until acknowledged only if
            # this slaqd acknowledges.
            self._acks = msg.get("ack") is True
            self._pump()
        elif kind == "ack":
            it = msg.get("iter")
            if isinstance(it, int) and it >= 0:
                confirmed = []
                while self._unacked and self._unacked[0][0] <= it:
                    confirmed.append(self._unacked.popleft()[0])
                    self._sent = max(0, self._sent - 1)
                self._acked = it
                self._log_acks(confirmed)
        elif kind == "alloc":
            if isinstance(cores, (int, float)) and cores >= 0:
                self._cores = float(cores)
            self._take_advice(msg)
        elif kind == "stop":
            self._stop_reason = str(msg.get("reason") or "stop")
        elif kind == "error":
            if os.environ.get("SLAQ_CLIENT_VERBOSE"):
                print("slaq client: slaqd says %s: %s"
                      % (msg.get("code"), msg.get("message")),
                      file=sys.stderr)
            if msg.get("code") == "unknown_job":
                # This slaqd does not know the job (its state was reset):
                # stay offline rather than retry forever.
                self._path = None
