print(("x"):rep(100, ("y"):rep(1e6)):len())
