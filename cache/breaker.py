"""A small circuit breaker: after a failure, stop calling a remote for a cooldown, then probe.

States: *closed* (calls go through), *open* (calls are refused until the cooldown ends), and
*half-open* (one caller, the probe, is let through; the others are refused until it reports).
Each failed probe doubles the cooldown up to a maximum, so a server that stays down or hung costs
one short timeout per cooldown rather than one per call.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

CLOSED, OPEN, HALF_OPEN = "closed", "open", "half-open"

ALLOW, PROBE, DENY = "allow", "probe", "deny"


class CircuitBreaker:
    """Thread-safe closed/open/half-open breaker with exponential cooldown."""

    def __init__(
        self,
        cooldown: float = 2.0,
        max_cooldown: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.base_cooldown = float(cooldown)
        self.max_cooldown = max(float(max_cooldown), self.base_cooldown)
        self._clock = clock
        self._lock = threading.Lock()
        self._state = CLOSED
        self._cooldown = self.base_cooldown
        self._retry_at = 0.0
        self.failures = 0
        self.trips = 0

    @property
    def state(self) -> str:
        """Current state: "closed", "open" or "half-open"."""
        return self._state

    def admit(self) -> str:
        """Decide for one call: ALLOW (closed), PROBE (this caller tests the remote) or DENY."""
        with self._lock:
            if self._state == CLOSED:
                return ALLOW
            if self._state == OPEN and self._clock() >= self._retry_at:
                self._state = HALF_OPEN
                return PROBE
            return DENY

    def force_probe(self) -> bool:
        """Take the probe slot now, whatever the cooldown; False if another probe is running."""
        with self._lock:
            if self._state == HALF_OPEN:
                return False
            self._state = HALF_OPEN
            return True

    def success(self) -> None:
        """Record a successful remote call: close the breaker and reset the cooldown."""
        with self._lock:
            self._state = CLOSED
            self._cooldown = self.base_cooldown

    def failure(self) -> bool:
        """Record a failed remote call: open the breaker. Returns True if it was closed before."""
        with self._lock:
            was = self._state
            if was == HALF_OPEN:
                self._cooldown = min(self._cooldown * 2, self.max_cooldown)
            elif was == CLOSED:
                self._cooldown = self.base_cooldown
                self.trips += 1
            self._state = OPEN
            self._retry_at = self._clock() + self._cooldown
            self.failures += 1
            return was == CLOSED
