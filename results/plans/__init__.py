"""The committed identification plans (tcsmt plan), installed with the
package as tcsmt.plans so that tcsmt identify finds them anywhere."""
