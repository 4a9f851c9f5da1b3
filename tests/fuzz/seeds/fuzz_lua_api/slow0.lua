print(pcall(table.move, {}, 1, math.maxinteger - 1, 2))
