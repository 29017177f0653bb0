"""Instruction tables: the matrix instructions a probe can run (NVIDIA
mma.sync, wmma, wgmma, tcgen05; AMD v_mfma), their shapes, formats and
fragment layouts, and the choice of one for a format pair."""
