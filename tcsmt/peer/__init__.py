"""MMA-Sim, the peer simulator: which of its instructions each shipped model
computes, and the measured agreement between the two."""
