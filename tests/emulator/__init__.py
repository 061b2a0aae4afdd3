"""A local Discord emulator (REST v10 + gateway + /_test control API) for end-to-end tests."""

from .client import EmulatorClient
from .server import Emulator

__all__ = ["Emulator", "EmulatorClient"]
