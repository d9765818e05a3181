"""rbf: recycling Bloom filters, their planner, models and simulator.

A recycling Bloom filter clears itself when it gets too full, so it can
de-duplicate an endless stream in fixed memory.  This package is a thin,
exact layer over librbf (linked statically into ``rbf._rbf``): the same
item gets the same answer from the same saved filter in Python, in C and in
the Redis module.

    >>> import rbf
    >>> f = rbf.Filter.planned(memory="4MiB", fp=0.001)
    >>> f.add(b"hello")           # True: new
    True
    >>> b"hello" in f
    True
    >>> f.add("hello")            # str items are their UTF-8 bytes
    False

Items are ``bytes``, ``bytearray``, ``memoryview``, ``str`` (UTF-8) and
``int`` (its decimal text, as redis-py sends it); anything else, ``bool``
and ``float`` included, raises ``TypeError``.

Models, planner, simulator: :func:`model`, :func:`plan`, :func:`simulate`
take the ``rbf`` command's options as keyword arguments and return its
``--json`` keys in a dict.  :func:`dedup` yields the first occurrences of
an iterable.  See docs/python.md.
"""
from __future__ import annotations

import copy as _copy
from typing import Any, Callable, Iterable, Iterator, Optional

from . import _rbf
from ._rbf import MAX_HASHES, Cancelled, library_version, strerror

__all__ = ["Filter", "Cancelled", "model", "plan", "simulate", "dedup", "parse_size", "MAX_HASHES",
           "library_version", "strerror", "__version__"]

__version__ = "2.1.0"

try:  # numpy is optional: curves are arrays with it, lists without
    import numpy as _np
except ImportError:  # pragma: no cover - exercised where numpy is absent
    _np = None


def parse_size(size: "int | str") -> int:
    """A memory size in bytes: an int, or a str such as ``"64MiB"``, ``"1MB"``,
    ``"1.5MiB"``, ``"1e6"``, ``"2^20"``, read by the ``rbf`` command's own
    reader of ``--memory`` (k K M G T P E: powers of 1000; Ki Mi Gi Ti Pi
    Ei: of 1024; the B is optional; a fraction must come to whole bytes)."""
    if isinstance(size, bool):
        raise TypeError("memory: an int or a str such as '64MiB'")
    if isinstance(size, int):
        v = size
    elif isinstance(size, str):
        v = _rbf._parse_bytes(size)
    else:
        raise TypeError("memory: an int or a str such as '64MiB'")
    if v <= 0:
        raise ValueError("memory: at least 1 byte")
    if v > (2**64 - 1) // 8:
        raise ValueError("memory: too large (at most 2**61 - 1 bytes)")
    return v


def _bits(bits: Optional[int], memory: "int | str | None") -> Optional[int]:
    if bits is not None and memory is not None:
        raise ValueError("give bits or memory, not both")
    if memory is not None:
        return parse_size(memory) * 8
    return bits


def _is_numpy_array(x: Any) -> bool:
    # a plain ndarray only: a subclass (np.char.chararray strips trailing
    # blanks from its elements, a masked array yields np.ma.masked) is
    # taken item by item, as numpy returns each element
    return _np is not None and type(x) is _np.ndarray


def _restore(cls: type, data: bytes, concurrent: bool, plan: Optional[dict]) -> "Filter":
    f = cls.from_bytes(data, concurrent=concurrent)
    if plan is not None:
        f._plan = plan
    return f


class Filter(_rbf.FilterBase):
    """A recycling Bloom filter (librbf's rbf_new and rbf_insert).

    Filter(*, bits, hashes, sigma=None | messages=None, phases=1,
           hashing="colliding", recycle="non-retaining", layout="flat",
           seed=None, concurrent=False)

    ``bits`` is the memory in bits (two-phase: split between two filters),
    ``hashes`` the positions per item (k), and exactly one threshold:
    ``sigma`` (recycle before more than sigma bits are set) or ``messages``
    (recycle after that many bit-setting items).  ``hashing`` is
    "colliding" or "non-colliding", ``recycle`` "non-retaining" or
    "retaining", ``layout`` "flat" or "blocked" (one 512-bit block per
    item; bits per filter a multiple of 512).  ``seed`` is the hash key:
    None draws one from the operating system; give one only for
    reproducible positions (whoever knows it can flood the filter).  A bad
    configuration raises ValueError with the library's message.

    Or let the planner choose: ``Filter.planned(memory="64MiB", fp=0.001)``
    or ``Filter.planned(capacity=10**6, fp=0.001)``; the plan stays on the
    filter as ``f.plan``.

    ``f.add(item)`` returns True when the item is reported new (as C's
    rbf_insert and Redis's RBF.ADD), ``item in f`` tests without inserting,
    ``f.update(iterable)`` adds all and returns how many were new,
    ``f.add_many``/``f.contains_many`` return one answer per item (a numpy
    bool array for a numpy array of fixed-width bytes).  There is no
    ``len()``: a recycling filter has no single count (``f.stats`` has the
    counters).

    Threads: a filter made with ``concurrent=False`` has a lock of its own,
    so threads can never corrupt it; calls that loop over items release the
    GIL.  ``concurrent=True`` makes a lock-free filter shared by threads.

    ``to_bytes()``, pickles and ``save()`` files hold the hash seed, which
    is the key against flooding: keep them as private as the filter's users.
    """

    __slots__ = ("_plan",)

    def __init__(self, *, bits: int, hashes: int, sigma: Optional[int] = None,
                 messages: Optional[int] = None, phases: int = 1,
                 hashing: str = "colliding", recycle: str = "non-retaining",
                 layout: str = "flat", seed: Optional[int] = None,
                 concurrent: bool = False) -> None:
        super().__init__(bits=bits, hashes=hashes, sigma=sigma, messages=messages,
                         phases=phases, hashing=hashing, recycle=recycle, layout=layout,
                         seed=seed, concurrent=concurrent)

    @classmethod
    def planned(cls, memory: "int | str | None" = None, fp: float = 0.001, *,
                capacity: Optional[int] = None, bits: Optional[int] = None, phases: int = 1,
                hashing: str = "colliding", recycle: str = "non-retaining",
                layout: str = "flat", seed: Optional[int] = None, concurrent: bool = False,
                max_hashes: int = 32) -> "Filter":
        """A filter sized by the planner (librbf's rbf_plan_memory /
        rbf_plan_messages).

        ``memory`` (bytes, or a str such as "64MiB") or ``bits``: the best
        sigma-bounded filter of that memory whose average false-positive
        rate is at most ``fp``.  ``capacity``: the least memory that holds
        ``capacity`` items per cycle at that rate.  ``phases=2`` plans the
        two-phase filter, ``layout="blocked"`` the blocked one (one-phase;
        with a capacity, the least whole blocks that hold it).  The plan
        (the dict of :func:`plan`) is ``f.plan``.
        ValueError when no filter reaches the target.
        """
        if fp is None or not (0 < fp < 1):
            raise ValueError("fp: the target average false-positive rate, 0 < fp < 1")
        if phases not in (1, 2):
            raise ValueError("phases: 1 or 2")
        nbits = _bits(bits, memory)
        if (nbits is None) == (capacity is None):
            raise ValueError("give either a memory (memory= or bits=) or capacity=")
        if capacity is not None:
            p = plan(messages=capacity, fp=fp, hashing=hashing, recycle=recycle,
                     max_hashes=max_hashes, layout=layout if layout != "flat" else None)
            if layout == "blocked":
                nbits = p["blocked_bits"]
            elif phases == 2:
                nbits = p["two_phase_bits"]
                p = plan(bits=nbits, fp=fp, hashing=hashing, recycle=recycle,
                         max_hashes=max_hashes)
            else:
                nbits = p["bits"]
        else:
            p = plan(bits=nbits, fp=fp, hashing=hashing, recycle=recycle,
                     max_hashes=max_hashes, layout=layout if layout != "flat" else None)
        if layout == "blocked":
            if phases == 2:
                raise ValueError("layout='blocked': the planner plans one-phase blocked filters")
            ch = p["layouts"]["blocked"]
            nbits = ch["bits"]
        else:
            ch = p["two_phase"] if phases == 2 else p["sigma_bounded"]
        if not ch["feasible"]:
            raise ValueError("no filter of %d bits reaches an average false-positive rate of %g:"
                             " give more memory or a larger fp" % (nbits, fp))
        f = cls(bits=nbits, hashes=ch["hashes"], sigma=ch["sigma"], phases=phases,
                hashing=hashing, recycle=recycle, layout=layout, seed=seed,
                concurrent=concurrent)
        f._plan = p
        return f

    @property
    def plan(self) -> Optional[dict]:
        """The planner's answer this filter was made from (None if not planned)."""
        try:
            return self._plan
        except AttributeError:
            return None

    def add_many(self, items: Iterable[Any]) -> Any:
        """Add every item in order; one answer per item (True: new), exactly
        ``[f.add(x) for x in items]``.  A numpy array of fixed-width bytes
        ('S' dtype; each element as numpy returns it, trailing NULs
        stripped) or of str ('U', as UTF-8) gives a numpy bool array."""
        a = self._fixed_bytes(items)
        if a is not None:
            out = _np.zeros(len(a), dtype=_np.bool_)
            if len(a):
                self._fixed(a, a.dtype.itemsize, out.view(_np.uint8), True)
            return out
        return self._add_list(items)

    def contains_many(self, items: Iterable[Any]) -> Any:
        """``[x in f for x in items]``, in one call (a numpy bool array for a
        numpy array of fixed-width bytes or str)."""
        a = self._fixed_bytes(items)
        if a is not None:
            out = _np.zeros(len(a), dtype=_np.bool_)
            if len(a):
                self._fixed(a, a.dtype.itemsize, out.view(_np.uint8), False)
            return out
        return self._contains_list(items)

    @staticmethod
    def _fixed_bytes(items: Any) -> Any:
        if not _is_numpy_array(items):
            return None
        if items.ndim != 1:
            raise ValueError("a numpy array of items must be one-dimensional")
        if items.dtype.kind == "U":
            items = _np.char.encode(items, "utf-8")
        if items.dtype.kind != "S":
            return None  # an object array or ints: item by item
        if items.dtype.itemsize == 0:
            items = items.astype("S1")
        return _np.ascontiguousarray(items)

    def copy(self) -> "Filter":
        """An independent copy (same seed, bits and counters)."""
        f = type(self).from_bytes(self.to_bytes(), concurrent=self.concurrent)
        if self.plan is not None:
            f._plan = _copy.deepcopy(self.plan)
        return f

    __copy__ = copy

    def __deepcopy__(self, memo: dict) -> "Filter":
        return self.copy()

    def __reduce__(self) -> Any:
        # the image holds the hash seed: a pickle is as private as the filter
        return (_restore, (type(self), self.to_bytes(), self.concurrent, self.plan))

    def __repr__(self) -> str:
        c = self.config
        th = "sigma=%d" % c["sigma"] if c["sigma"] else "messages=%d" % c["messages"]
        return "rbf.Filter(bits=%d, hashes=%d, %s, phases=%d, hashing=%r, recycle=%r, " \
               "layout=%r, concurrent=%r)" % (c["bits"], c["hashes"], th, c["phases"],
                                              c["hashing"], c["recycle"], c["layout"],
                                              c["concurrent"])

    @property
    def stats(self) -> "Record":
        """The counters: bits (per filter), bits_set, frozen_bits_set, cycles,
        cycle_messages, inserts, reported_new.  A dict whose keys are also
        attributes (``f.stats["inserts"] == f.stats.inserts``).  There is no
        ``len(f)``: a recycling filter forgets whole cycles, so it has no
        single count."""
        return Record(_rbf.FilterBase.stats.__get__(self))

    @property
    def config(self) -> "Record":
        """The configuration: bits, hashes, sigma, messages, phases, hashing,
        recycle, layout, seed (the hash key: keep it private), concurrent.
        A dict whose keys are also attributes."""
        return Record(_rbf.FilterBase.config.__get__(self))

    __hash__ = None  # type: ignore[assignment]


class Record(dict):
    """A dict whose keys are also read as attributes (f.stats.inserts)."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __dir__(self) -> Iterable[str]:
        return list(self.keys()) + dir(dict)


def _arrays(d: dict, keys: Iterable[str]) -> dict:
    if _np is not None:
        for k in keys:
            if k in d:
                d[k] = _np.asarray(d[k], dtype=_np.uint64 if k in ("sigma", "messages")
                                   else _np.float64)
    return d


def model(*, bits: Optional[int] = None, hashes: int, sigma: Optional[int] = None,
          messages: Optional[int] = None, phases: int = 1, hashing: str = "colliding",
          recycle: str = "non-retaining", layout: str = "flat", method: str = "auto",
          points: Optional[int] = None, memory: "int | str | None" = None,
          oracle: bool = False, fn: Optional[str] = None,
          forget: "int | Iterable[int] | None" = None, arrivals: Optional[int] = None,
          replicas: Optional[int] = None,
          progress: Optional[Callable[[int, int], Any]] = None) -> dict:
    """The analytic model of a filter: ``rbf model ... --json`` as a dict.

    sigma-bounded (``sigma=``): fp, expected_messages (two-phase: also
    fp_active, fp_frozen); N-bounded (``messages=``): f_w, f_o, f_a,
    exact_worst, exact_oracle, exact_real, exact_real_worst, saturated_at.
    ``bits`` is the total memory (or ``memory=`` in bytes).  ``points=P``
    samples the curve at P thresholds up to sigma (or messages): the dict
    then has "curve", columns as numpy arrays (lists without numpy).
    The cycle-length models, as ``rbf model --oracle / --fn / --forget``
    and two-phase ``messages``: ``oracle=True`` (N-bounded, recycling
    after N new arrivals), ``fn="uniform:P" | "zipf:P:S" | "fading:R:L"``
    (the steady-state false-negative rate under that workload: fn,
    forgotten, tick_fraction) and ``forget=[gaps in ticks]`` (per gap, the
    probability a message is forgotten and of a false negative); these
    give fp and cycle_mean (None when the filter fills and never recycles).
    ``fn="trace:FILE"`` (one message per line) replays the cycle law on
    that log (method "replay": fp and fn on the trace, "whole" and
    "steady" rates, "forget_curve" by gap); ``arrivals=A`` starts the
    filter empty at each window of A lines, ``replicas=R`` sets the draws.
    ``progress(done, total)`` is called now and then; a true return value
    stops the computation (rbf.Cancelled), an exception it raises comes
    through, and Ctrl-C raises KeyboardInterrupt.  The GIL is
    released while the model runs."""
    d = _rbf._model(bits=_bits(bits, memory), hashes=hashes, sigma=sigma, messages=messages,
                    phases=phases, hashing=hashing, recycle=recycle, layout=layout,
                    method=method, points=points, progress=progress, oracle=oracle, fn=fn,
                    forget=forget, arrivals=arrivals, replicas=replicas)
    if "curve" in d:
        _arrays(d["curve"], list(d["curve"]))
    return d


_DEDUP_BLOCKED_WITHIN = 0.95  # rbf dedup's rule (src/cli/dedup_size.c)


def _dedup_filter(memory: "int | str", fp: float, phases: int, seed: Optional[int],
                  layout: Optional[str]) -> "Filter":
    if layout not in (None, "flat", "blocked"):
        raise ValueError("layout: 'flat' or 'blocked' (or None: as rbf dedup chooses)")
    if phases not in (1, 2):
        raise ValueError("phases: 1 or 2")
    nbits = _bits(None, memory)
    if nbits is None:
        raise ValueError("memory: the filter's size")
    if layout is None:
        layout = "flat"
        if phases == 1 and nbits >= 512:
            lay = plan(bits=nbits, fp=fp, layout="blocked")["layouts"]
            fl, bl = lay["flat"], lay["blocked"]
            if bl["feasible"] and (not fl["feasible"] or bl["expected_messages"] >=
                                   _DEDUP_BLOCKED_WITHIN * fl["expected_messages"]):
                layout = "blocked"
    if layout == "blocked" and phases == 2:
        nbits -= nbits % 1024
        if nbits == 0:
            raise ValueError("memory: the blocked layout needs at least 128 bytes")
        ch = plan(bits=nbits, fp=fp)["two_phase"]
        if not ch["feasible"]:
            raise ValueError("no two-phase filter of %d bits reaches an average false-positive "
                             "rate of %g: give more memory or a larger fp" % (nbits, fp))
        return Filter(bits=nbits, hashes=ch["hashes"], sigma=ch["sigma"], phases=2,
                      layout="blocked", seed=seed)
    return Filter.planned(bits=nbits, fp=fp, phases=phases, seed=seed, layout=layout)


def plan(*, fp: float, bits: Optional[int] = None, memory: "int | str | None" = None,
         messages: Optional[int] = None, capacity: Optional[int] = None, max_hashes: int = 32,
         hashing: str = "colliding", recycle: str = "non-retaining", method: str = "auto",
         layout: Optional[str] = None, remember: Optional[int] = None,
         miss: Optional[float] = None, fn: Optional[str] = None,
         arrivals: Optional[int] = None,
         progress: Optional[Callable[[int, int], Any]] = None) -> dict:
    """Capacity planning: ``rbf plan ... --json`` as a dict.

    With a memory (``bits=`` or ``memory=``): the best k and threshold of
    every policy (sigma_bounded, average_n, oracle_n, worst_case,
    two_phase) whose average false-positive rate is at most ``fp``.  With
    ``messages=`` (or ``capacity=``): the least memory holding that many
    messages per cycle ("bits", and "two_phase_bits").  ``layout="blocked"``
    adds both layouts' plans ("layouts": "flat" and "blocked",
    "blocked_vs_flat_per_bit"; with a capacity also "blocked_bits", the
    least whole blocks that hold it).  ``remember=W`` (with a memory, and
    ``miss=``, default 0.01) sizes for both errors as ``rbf plan
    --remember``: the one- or two-phase filter holding the most messages
    whose chance of forgetting a message repeated W ticks later is at most
    ``miss``.  ``fn="trace:FILE"`` (with a memory, ``miss=`` and optionally
    ``arrivals=``) sizes for a log as ``rbf plan --fn``: the filter holding
    the most messages whose false-negative rate on that trace is at most
    ``miss``.  Interruptible: Ctrl-C (KeyboardInterrupt),
    or a true return of ``progress(done, total)`` (rbf.Cancelled)."""
    if capacity is not None:
        if messages is not None:
            raise ValueError("give messages or capacity, not both")
        messages = capacity
    return _rbf._plan(bits=_bits(bits, memory), messages=messages, fp=fp,
                      max_hashes=max_hashes, hashing=hashing, recycle=recycle, method=method,
                      layout=layout, progress=progress, remember=remember, miss=miss,
                      fn=fn, arrivals=arrivals)


def simulate(*, bits: Optional[int] = None, hashes: int, sigma: Optional[int] = None,
             messages: Optional[int] = None, oracle: bool = False, hashing: str = "colliding",
             recycle: str = "non-retaining", phases: int = 1, layout: str = "flat",
             workload: str = "uniform:1000", arrivals: Optional[int] = None,
             warmup: Optional[int] = None, epochs: Optional[int] = None, seed: Optional[int] = None,
             threads: Optional[int] = None, detail: bool = False, memory: "int | str | None" = None,
             progress: Optional[Callable[[int, int], Any]] = None) -> dict:
    """Run the simulator on the library's real filter: ``rbf simulate ...
    --json`` as a dict (fp, fp_first, fp_each, fn, messages_per_cycle with
    their 99% intervals "<name>_ci99", the counts, the model's prediction).
    "epoch_rates" holds each rate per epoch (numpy arrays with numpy);
    ``detail=True`` adds "per_epoch" as the CLI's --detail does.  Defaults
    as the command's: bits 1000, uniform:1000, 100000 arrivals, 7 epochs,
    seed 1, every processor.  The numbers depend only on the options and
    the seed.  The GIL is released while it runs; Ctrl-C stops it
    (KeyboardInterrupt), so does a true return of ``progress(done, total)``
    (rbf.Cancelled)."""
    d = _rbf._simulate(bits=_bits(bits, memory), hashes=hashes, sigma=sigma, messages=messages,
                       oracle=oracle, hashing=hashing, recycle=recycle, phases=phases,
                       layout=layout, workload=workload, arrivals=arrivals, warmup=warmup,
                       epochs=epochs, seed=seed, threads=threads, detail=detail,
                       progress=progress)
    _arrays(d["epoch_rates"], list(d["epoch_rates"]))
    return d


def dedup(iterable: Iterable[Any], memory: "int | str" = "64MiB", fp: float = 0.001, *,
          key: Optional[Callable[[Any], Any]] = None, phases: int = 1,
          seed: Optional[int] = None, layout: Optional[str] = None) -> Iterator[Any]:
    """Yield each element of ``iterable`` not seen before, in order, in fixed
    memory (``rbf dedup`` for Python objects): a filter planned for
    ``memory`` at average false-positive rate ``fp``.  ``key(x)`` gives the
    item to test (bytes, str or int); by default the element itself.  A
    false positive drops a new element (rate about fp); a recycle forgets
    old elements, so a repeat far enough apart comes back.

    The filter is the command's: without ``layout``, blocked when the
    blocked planner's items per cycle are within 5% of the flat plan's
    in the same memory (one phase), flat otherwise; ``phases=2`` with
    ``layout="blocked"`` takes the flat two-phase plan on whole blocks.
    So with the same ``seed`` it drops what ``rbf dedup --seed`` drops."""
    f = _dedup_filter(memory, fp, phases, seed, layout)
    add = f.add
    if key is None:
        for x in iterable:
            if add(x):
                yield x
    else:
        for x in iterable:
            if add(key(x)):
                yield x
