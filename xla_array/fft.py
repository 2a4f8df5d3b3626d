"""The fft extension (being written)."""

__all__: list[str] = []
