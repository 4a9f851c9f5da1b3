local s = ("x"):rep(1e6) print(#s:gsub(".", "%0%0"))
