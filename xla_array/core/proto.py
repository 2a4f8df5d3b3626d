"""The protobuf wire encoding of the compile options xla_array sets that jaxlib's
``CompileOptions`` has no setter for (no jaxlib here: ``backend`` merges the bytes).

DebugOptions.xla_backend_extra_options (field 500 of xla.proto; the same in jaxlib 0.10 and
0.12): options XLA passes to LLVM's command line when it compiles a module, re-read whenever
a compile's set differs from the last one's (XLA's LLVMCommandLineOptionsLock), so they apply
per compile. A map, which CompileOptions' overrides cannot set: it is merged into the
serialized options (CompileOptions 3 -> ExecutableBuildOptions 3 -> DebugOptions 500)."""

from __future__ import annotations

__all__ = ["field", "llvm_options"]


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    def varint(v: int) -> bytes:
        out = bytearray()
        while True:
            out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
            v >>= 7
            if not v:
                return bytes(out)
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def llvm_options(llvm: str) -> bytes:
    """Serialized CompileOptions fields setting the LLVM options ``llvm`` ("-name=value,...");
    appended to serialized CompileOptions, they merge into them."""
    entries = b""
    for item in filter(None, (s.strip() for s in llvm.split(","))):
        name, _, value = item.partition("=")
        entries += field(500, field(1, name.encode()) + field(2, value.encode()))
    return field(3, field(3, entries))
