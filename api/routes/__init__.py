"""HTTP routes of the argweb API; thin layers over :mod:`api.services`."""
