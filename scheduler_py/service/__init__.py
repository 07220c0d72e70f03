"""The Thrift edge of the brain: Storm snapshots in, per-topology plans out.

Reading order of one scheduling round: :mod:`wire` (the IDL) → :mod:`shim_auth` (only the
shim's sealed rounds feed the controller) → :mod:`snapshot` (Thrift snapshot → typed state)
→ :mod:`server` (the thriftpy2 service Nimbus's shim calls; :mod:`bounded` the limits of its
port). :mod:`auth` is the operator secret that changing calls carry, :mod:`client` the
operator tools' side (it checks the brain's proof before sending that secret).
"""
