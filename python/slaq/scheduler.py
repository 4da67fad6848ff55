"""slaq.scheduler — slaqd's control requests as a Python API.

    from slaq import Scheduler
    s = Scheduler()                                  # as `slaq` finds slaqd
    jid = s.submit(["slaq-train", "logreg", "--iters", "40"], name="lr")
    job = s.wait(jid)                                # the final Job
    df = s.history(jid, as_frame=True)               # every report

Each method is one control request of docs/protocol.md ("Control
sessions"), or the pages of one, as the `slaq` command sends it; replies
become dataclasses (Job, Report, Status, Node) and refusals exceptions
carrying slaqd's message (SlaqError and its subclasses). slaqd decides
everything: who may do what, what a field may hold; nothing of that is
checked here.

Where slaqd is, as `slaq` finds it (docs/cli.md, src/cli/daemon_rpc.c):
host= or $SLAQ_HOST: TCP in a sealed session (slaq.sealed, with the
credential of $SLAQ_USER_TOKEN or ~/.config/slaq/token); socket=,
state_dir= or $SLAQ_SOCKET: that Unix socket; else ./var/slaq.sock when
it exists, else /run/slaq/slaq.sock. A socket that was found rather than
named is used only when it and its directory belong to the user or root
(the directory writable by no one else) and the process serving it runs
as the user or root; otherwise Unavailable, and nothing is sent.
"""

import dataclasses
import json
import os
import socket
import stat
import struct
import time
from typing import Any, Dict, Optional

SYSTEM_SOCKET = "/run/slaq/slaq.sock"
LOCAL_SOCKET = "./var/slaq.sock"
TOKEN_FILE = ".config/slaq/token"
TIMEOUT = 10.0
ENDED = ("done", "failed", "stopped", "cancelled", "lost")


# --- errors --------------------------------------------------------------

class SlaqError(Exception):
    """A request slaqd refused, or could not be made. `code` is slaqd's
    error code (docs/protocol.md, "Error codes"), None when slaqd was not
    reached; `message` slaqd's (or this module's) explanation; `reply` the
    whole reply when there was one."""

    def __init__(self, message, code=None, reply=None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.reply = reply


class PermissionDenied(SlaqError):
    """`permission_denied`: the user may not do this (another user's job,
    the policy without being an administrator; docs/security.md)."""


class NotFound(SlaqError):
    """`unknown_job`: slaqd has no such job."""


class BadRequest(SlaqError):
    """A malformed or refused request: `bad_request`, `bad_policy`,
    `bad_json`, `bad_message`, `unknown_type`, `not_active`,
    `not_suspendable`, `not_resumable`, `submit_failed`, `limit_reached`
    and the other codes that say the request cannot be done as asked."""


class Unavailable(SlaqError):
    """slaqd cannot be reached or trusted (no socket, refused socket, no
    reply in time, TCP without libsodium or credential), or cannot do the
    request now (`store_failed`, `shutting_down`, `no_memory`)."""


_BY_CODE = {"permission_denied": PermissionDenied, "unknown_job": NotFound,
            "store_failed": Unavailable, "shutting_down": Unavailable,
            "no_memory": Unavailable, "unauthorized": PermissionDenied,
            "forbidden": PermissionDenied, "rate_limited": Unavailable}


def error_of(reply):
    """The exception for a reply with "ok": false, by its code; an unknown
    code is a BadRequest (a refusal of this request)."""
    code = reply.get("code")
    msg = reply.get("message") or "slaqd refused the request (%s)" % code
    return _BY_CODE.get(code, BadRequest)(msg, code=code, reply=reply)


# --- typed results -------------------------------------------------------

class _Record:
    """A dataclass built from one of slaqd's JSON objects: the fields the
    class declares are set from the keys of the same name, every other key
    is kept in `extra`, so a newer slaqd's fields are not lost."""

    @classmethod
    def from_dict(cls, d):
        names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        known = {k: v for k, v in d.items() if k in names}
        obj = cls(**known)
        obj.extra = {k: v for k, v in d.items() if k not in names}
        obj._keys = list(d)
        return obj

    def to_dict(self):
        """The object as slaqd sent it: its keys in slaqd's order (a
        declared field slaqd did not send is left out unless set since),
        the values as they are now."""
        keys = list(getattr(self, "_keys", []))
        for f in dataclasses.fields(self):
            if (f.name != "extra" and f.name not in keys and
                    getattr(self, f.name) is not None):
                keys.append(f.name)
        keys += [k for k in self.extra if k not in keys]
        return {k: self[k] for k in keys}

    def __getitem__(self, key):
        """job["field"] reads a declared field or one kept in extra."""
        if key != "extra" and key in {f.name for f in
                                      dataclasses.fields(self)}:
            return getattr(self, key)
        return self.extra[key]

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default


def _fields(*names):
    return [(n, Any, dataclasses.field(default=None)) for n in names]


# The job object of `ls` and `show` (docs/protocol.md, "A job object
# has", and show's additions), in slaqd's order.
JOB_FIELDS = (
    "id", "user", "uid", "name", "state", "managed", "pid", "cmd", "cwd",
    "weight", "max_cores", "target_reduction", "max_iters", "max_time",
    "convergence", "cores", "iter", "reports", "loss", "first_loss",
    "end_loss", "metric_name", "metric", "metric_iter", "deadline", "slack",
    "accuracy", "direction", "urgency", "stop", "accuracy_met", "priority",
    "cpu_s", "connected", "reason", "exit_code", "signal", "submitted",
    "started", "ended", "recent_cores", "reduction", "pred_norm_loss",
    "gain", "throttled", "iters_per_s", "recent_losses", "threads",
    "threads_used", "scaling", "stall_s", "eta90_s", "forecast_norm_error",
    "node", "suspended", "sweep", "kind", "declared_iters", "restartable",
    "suspend_ms", "checkpoint_bytes", "continued_by", "resumed_from",
    # show only:
    "prediction", "history", "allocations", "events", "log_dir", "array",
    "index")


def _record(name, fields, doc, **namespace):
    """A record class (a dataclass on _Record) of slaqd's object `name`:
    the given fields, each None by default, an `extra` dict for the
    others, and its docstring."""
    cls = dataclasses.make_dataclass(
        name, _fields(*fields) + [
            ("extra", Dict[str, Any],
             dataclasses.field(default_factory=dict))],
        bases=(_Record,), namespace=dict(namespace, __doc__=doc))
    cls.__module__ = __name__  # made by make_dataclass: for pickle, repr
    return cls


Job = _record(
    "Job", JOB_FIELDS, "One job as `slaq show --json` prints it (a job "
    "object of docs/protocol.md). From `ls` the show-only fields (history, "
    "allocations, events, prediction, log_dir) are None. Unknown fields are "
    "in `extra`; job['x'] reads either.",
    active=property(lambda self: self.state not in ENDED,
                    doc="True while the job runs or is stopping."))

STATUS_FIELDS = (
    "pid", "started", "policy", "predictor", "enforce", "enforce_detail",
    "cgroup", "epoch", "reports_total", "store_ok", "store_error",
    "buffered_bytes", "recent_epochs", "state_dir", "socket", "http_port",
    "http_addr", "share", "normalise", "startup_reports", "hysteresis",
    "damping", "horizon_iters", "cores", "epoch_s", "query_min_cores",
    "settings")

Status = _record(
    "Status", STATUS_FIELDS, "slaqd's `status` reply (docs/protocol.md; the "
    "counters of docs/metrics.md): the usual fields typed, every other "
    "counter in `extra`; status['x'] reads either.")

NODE_FIELDS = ("name", "capacity", "allocated", "jobs", "state",
               "last_heartbeat", "heartbeat_age_s", "enforce", "connected",
               "reports")

Node = _record("Node", NODE_FIELDS, "One node of the `nodes` reply.")

REPORT_COLUMNS = ("iter", "loss", "cpu_s", "samples", "t", "metric")


@dataclasses.dataclass
class Report:
    """One iteration report of a job (a row of the `history` reply):
    iteration (0: the loss before training), loss, the iteration's
    CPU-seconds, its samples, slaqd's wall clock when it arrived (Unix
    seconds), and the job's metric (None when the report had none)."""
    iter: int
    loss: float
    cpu_s: Optional[float] = None
    samples: Optional[float] = None
    t: Optional[float] = None
    metric: Optional[float] = None

    @classmethod
    def from_row(cls, row):
        return cls(*(list(row) + [None] * 6)[:6])


# --- finding and trusting slaqd -----------------------------------------

def _trusted_uid(uid):
    return uid == 0 or uid == os.getuid()


def check_socket_trust(path, sock):
    """Raises Unavailable unless the socket at path (connected as sock)
    may be trusted although the user did not name it: it and its directory
    belong to the user or root, the directory is writable by no one else,
    and the process serving it (SO_PEERCRED) runs as the user or root."""
    what, who = None, None
    try:
        ss = os.lstat(path)
    except OSError:
        ss = None
    d = os.path.dirname(path) or "."
    if ss is None or not stat.S_ISSOCK(ss.st_mode):
        what = "is not a socket"
    elif not _trusted_uid(ss.st_uid):
        what, who = "belongs to", ss.st_uid
    else:
        try:
            ds = os.lstat(d)
        except OSError:
            ds = None
        if (ds is None or not stat.S_ISDIR(ds.st_mode) or
                not _trusted_uid(ds.st_uid) or ds.st_mode & 0o022):
            what = "is in a directory another user may change"
        else:
            try:
                cred = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                       struct.calcsize("3i"))
                uid = struct.unpack("3i", cred)[1]
            except OSError:
                uid = None
            if uid is None or not _trusted_uid(uid):
                what, who = "is served by", uid
    if what is None:
        return
    hint = ("name the socket to use with socket=, state_dir= or SLAQ_SOCKET "
            "if you trust it")
    if who is not None:
        raise Unavailable("refusing %s: it %s uid %d, not you or root; %s"
                          % (path, what, who, hint))
    raise Unavailable("refusing %s: it %s; %s" % (path, what, hint))


def _user_token():
    env = os.environ.get("SLAQ_USER_TOKEN")
    if env:
        return env
    home = os.environ.get("HOME")
    path = os.path.join(home or "", TOKEN_FILE)
    try:
        with open(path) as f:
            tok = f.readline().strip()
    except OSError as e:
        raise Unavailable("no user credential: run `slaq token --save` on "
                          "the controller's machine (or set SLAQ_USER_TOKEN);"
                          " looked for %s: %s" % (path, e.strerror
                                                  if home else
                                                  "HOME is not set"))
    if not tok:
        raise Unavailable("no user credential: %s is empty; run `slaq token "
                          "--save` on the controller's machine" % path)
    return tok


class Scheduler:
    """A connection to slaqd (one connection per request, as `slaq` makes).

    socket: a Unix socket's path; state_dir: slaqd's state directory (its
    slaq.sock); host: "HOST:PORT" of `slaqd --tcp` (a sealed session with
    the user's credential, or `credential=` "UID:EXPIRES:GENERATION:HEX" /
    "admin:TOKEN"). Given none, $SLAQ_HOST, then $SLAQ_SOCKET, then the
    sockets the `slaq` command finds (module docstring). host with socket
    or state_dir is a ValueError. timeout: seconds to wait for each reply.
    Nothing is sent until the first request."""

    def __init__(self, socket=None, state_dir=None, host=None,
                 credential=None, timeout=TIMEOUT):
        if host and (socket or state_dir):
            raise ValueError("host= names a slaqd over TCP, %s= a local one:"
                             " give one of them"
                             % ("socket" if socket else "state_dir"))
        self.timeout = timeout
        self.credential = credential
        self.host = host
        self.named = True
        if not host and not socket and not state_dir:
            env_host = os.environ.get("SLAQ_HOST")
            env_sock = os.environ.get("SLAQ_SOCKET")
            if env_host:
                self.host = env_host
            elif env_sock:
                socket = env_sock
        if self.host:
            self.socket = None
        elif socket:
            self.socket = socket
        elif state_dir:
            self.socket = os.path.join(state_dir, "slaq.sock")
        else:
            self.named = False
            self.socket = (SYSTEM_SOCKET if not os.path.exists(LOCAL_SOCKET)
                           and os.path.exists(SYSTEM_SOCKET)
                           else LOCAL_SOCKET)

    def __repr__(self):
        return "Scheduler(%s)" % (("host=%r" % self.host) if self.host
                                  else "socket=%r" % self.socket)

    @property
    def where(self):
        """Where requests go: the socket's path or HOST:PORT."""
        return self.host or self.socket

    # -- one request ------------------------------------------------------

    def request(self, msg):
        """Sends one control request (a dict with "type") and returns the
        reply (a dict) when it is "ok"; raises the SlaqError subclass of
        the reply's code otherwise, Unavailable when slaqd cannot be
        reached, does not answer within the timeout or closes without a
        reply."""
        reply = self._tcp(msg) if self.host else self._unix(msg)
        if not isinstance(reply, dict):
            raise Unavailable("unreadable reply from slaqd at %s"
                              % self.where)
        if reply.get("ok") is not True:
            raise error_of(reply)
        return reply

    def _unix(self, msg):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        try:
            try:
                s.connect(self.socket)
            except OSError as e:
                raise Unavailable(
                    "slaqd is not running (cannot connect to %s: %s); start"
                    " it with 'slaqd', or point socket= / state_dir= / host="
                    " / SLAQ_SOCKET at a running one"
                    % (self.socket, e.strerror or e))
            if not self.named:
                check_socket_trust(self.socket, s)
            s.sendall(json.dumps(msg).encode() + b"\n")
            buf = b""
            while b"\n" not in buf:
                try:
                    data = s.recv(1 << 20)
                except socket.timeout:
                    raise Unavailable("slaqd at %s did not answer within "
                                      "%g s" % (self.socket, self.timeout))
                except OSError as e:
                    raise Unavailable("slaqd at %s: %s" % (self.socket, e))
                if not data:
                    raise Unavailable("slaqd at %s closed the connection "
                                      "without a reply" % self.socket)
                buf += data
        finally:
            s.close()
        try:
            return json.loads(buf.split(b"\n", 1)[0])
        except ValueError as e:
            raise Unavailable("unreadable reply from slaqd at %s: %s"
                              % (self.socket, e))

    def _tcp(self, msg):
        from . import sealed
        try:
            sealed.load_sodium()
        except RuntimeError as e:
            raise Unavailable(str(e))
        cred = self.credential or _user_token()
        try:
            sealed.check_credential(cred)
            sess = sealed.Session(self.host, cred, timeout=self.timeout)
        except ValueError as e:
            raise Unavailable(str(e))
        except sealed.Refused as e:
            r = e.args[0]
            if isinstance(r, dict):
                err = error_of(r)
                err.message = "slaqd at %s refused the session: %s" % (
                    self.host, err.message)
                err.args = (err.message,)
                raise err
            raise Unavailable(str(r))
        except OSError as e:
            raise Unavailable("slaqd is not reachable at %s: %s (is it run "
                              "with --tcp %s?)" % (self.host, e, self.host))
        try:
            reply = sess.request(msg)
        except sealed.Refused as e:
            raise Unavailable(str(e.args[0]))
        except (OSError, ValueError) as e:
            raise Unavailable("slaqd at %s: %s" % (self.host, e))
        finally:
            sess.close()
        if reply is None:
            raise Unavailable("slaqd at %s closed the connection without a "
                              "reply" % self.host)
        reply.pop("plain", None)
        return reply

    # -- jobs -------------------------------------------------------------

    def submit(self, cmd, name=None, cores=None, target_reduction=None,
               deadline=None, accuracy=None, env=None, cwd=None, **fields):
        """Starts cmd (a list of strings; a string is one argument) as a
        job and returns its id. cores is max_cores; env a mapping or a
        list of "NAME=value" (default: this process's environment, as
        `slaq submit` sends it); cwd the working directory (default this
        process's). Other submit fields of docs/protocol.md (weight,
        max_iters, max_time, convergence, direction, urgency, stop,
        array...) pass as keywords."""
        if isinstance(cmd, str):
            cmd = [cmd]
        req = {"type": "submit", "cmd": [str(c) for c in cmd],
               "cwd": cwd if cwd is not None else os.getcwd()}
        env = os.environ if env is None else env
        if hasattr(env, "items"):
            env = ["%s=%s" % kv for kv in env.items()]
        req["env"] = list(env)
        for k, v in (("name", name), ("max_cores", cores),
                     ("target_reduction", target_reduction),
                     ("deadline", deadline), ("accuracy", accuracy)):
            if v is not None:
                req[k] = v
        req.update({k: v for k, v in fields.items() if v is not None})
        return self.request(req)["job"]

    def jobs(self, all=False):
        """The jobs slaqd knows (list of Job): the active ones, or with
        all=True every job; every page of `ls` followed."""
        out, after = [], 0
        while after is not None:
            r = self.request({"type": "ls", "active": not all,
                              "after": after})
            out.extend(Job.from_dict(j) for j in r.get("jobs", []))
            after = r.get("next")
        return out

    def job(self, id):
        """Job id as `slaq show --json` prints it (a Job with its
        prediction, thinned history, allocations and events). NotFound
        when slaqd has none."""
        return Job.from_dict(self.request({"type": "show",
                                           "job": _job_ref(id)})["job"])

    def history(self, id, as_frame=False, page=5000):
        """Every report of job id in iteration order (list of Report),
        fetched `page` at a time as `slaq history` does. With
        as_frame=True a pandas DataFrame with the columns iter, loss,
        cpu_s, samples, t, metric; ImportError saying so without pandas."""
        if as_frame:
            try:
                import pandas
            except ImportError as e:
                raise ImportError(
                    "Scheduler.history(as_frame=True) needs pandas (pip "
                    "install pandas, or apt install python3-pandas); "
                    "without it, call history(id) for a list of Report: %s"
                    % e) from e
        rows, after, first = [], None, True
        while first or after is not None:
            first = False
            r = self.request({"type": "history", "job": _job_ref(id),
                              "after": after, "limit": page})
            rows.extend(r.get("rows", []))
            after = r.get("next")
        if as_frame:
            return pandas.DataFrame([(list(row) + [None] * 6)[:6]
                                     for row in rows],
                                    columns=list(REPORT_COLUMNS))
        return [Report.from_row(row) for row in rows]

    def cancel(self, id, now=False):
        """Cancels job id: asks it to stop (SIGTERM after the grace
        period), or with now=True SIGTERMs it at once. Returns the Job
        (state stopping). PermissionDenied for another user's job."""
        return Job.from_dict(self.request({"type": "cancel",
                                           "job": _job_ref(id),
                                           "now": bool(now)})["job"])

    def suspend(self, id, checkpoint=False):
        """Suspends running job id (SIGSTOP; with checkpoint=True it is
        asked to leave a checkpoint and exit). Returns slaqd's reply."""
        return self.request({"type": "suspend", "job": _job_ref(id),
                             "checkpoint": bool(checkpoint)})

    def resume(self, id):
        """Resumes suspended job id; returns the Job resumed (a new job,
        continuing from the checkpoint, after a checkpoint suspend)."""
        r = self.request({"type": "resume", "job": _job_ref(id)})
        return Job.from_dict(r["job"]) if isinstance(r.get("job"), dict) \
            else r

    def wait(self, id, timeout=None, poll=0.5):
        """Polls job id every `poll` seconds until it has ended and returns
        the final Job; TimeoutError after `timeout` seconds (None: no
        limit)."""
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            j = self.job(id)
            if j.state in ENDED:
                return j
            if end is not None and time.monotonic() >= end:
                raise TimeoutError("job %s is still %s after %g s"
                                   % (id, j.state, timeout))
            time.sleep(poll)

    # -- slaqd ------------------------------------------------------------

    def policy(self, name=None):
        """The policy in force; with name, sets it first (an
        administrator's request: PermissionDenied otherwise, BadRequest
        for an unknown name) and returns the new one."""
        req = {"type": "policy"}
        if name is not None:
            req["name"] = name
        return self.request(req)["policy"]

    def status(self):
        """slaqd's counters and settings (Status)."""
        r = dict(self.request({"type": "status"}))
        r.pop("type", None)
        r.pop("ok", None)
        return Status.from_dict(r)

    def nodes(self):
        """The nodes (list of Node; one, "local", without agents)."""
        return [Node.from_dict(n) for n in
                self.request({"type": "nodes"}).get("nodes", [])]

    def sweep(self, spec, cwd=None, env=None):
        """Starts a sweep (docs/sweep-cli.md) from spec, a dict or the path
        of a SPEC.json, with cwd and env as submit's defaults, as `slaq
        sweep SPEC.json` sends it; returns slaqd's sweep object (its
        `id`...). slaqd checks the spec: BadRequest with its message."""
        if not isinstance(spec, dict):
            with open(os.fspath(spec)) as f:
                try:
                    spec = json.load(f)
                except ValueError as e:
                    raise BadRequest("%s: %s" % (spec, e), code="bad_json")
        env = os.environ if env is None else env
        if hasattr(env, "items"):
            env = ["%s=%s" % kv for kv in env.items()]
        r = self.request({"type": "sweep_submit", "spec": spec,
                          "cwd": cwd if cwd is not None else os.getcwd(),
                          "env": list(env)})
        return r.get("sweep")


def _job_ref(id):
    """A job reference as slaqd takes it: an int id, or text ("12",
    "7_3" for a task of an array)."""
    if isinstance(id, bool):
        raise TypeError("a job id is an int or a string, not a bool")
    if isinstance(id, int):
        return id
    if hasattr(id, "id") and isinstance(getattr(id, "id"), int):
        return id.id  # a Job
    return str(id)
