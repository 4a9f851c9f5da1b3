print(select('#', table.unpack({}, 1, 1e7)))
