// Process-wide allocator settings for the process that runs the sampler (rank 0).
#pragma once

namespace cleansweep {

// Keeps freed blocks of up to 32 MiB in the heap instead of giving them back to the kernel (and 64
// MiB of headroom at its top), so
// that the GP sampler's large temporaries (a few MB per ask) reuse pages that are already mapped.
// Without it glibc maps and unmaps each one afresh, and on a virtual machine whose page faults
// trap into the hypervisor those faults cost more than the arithmetic (bench/README.md, "GP
// sampler": 40-50 against 15 ms per ask at 500 trials). No effect outside glibc.
void KeepFreedMemoryMapped();

}  // namespace cleansweep
