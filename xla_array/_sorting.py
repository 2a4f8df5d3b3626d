"""(being written)"""

__all__: list[str] = []
