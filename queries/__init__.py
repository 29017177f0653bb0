"""Property queries: one module per question about a model's parameters.

Each module defines ``PROPERTY`` (a tcsmt.properties.registry.Property). The module
says which hypotheses to tell apart and which inputs are allowed; it never
touches a solver. Installed as the package ``tcsmt.queries``.
"""
