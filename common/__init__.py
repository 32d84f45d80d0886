"""What every app shares and no app owns: the kernel (`common.kernel`: pure helpers,
no models, imports no app) and the web layer (`common.web`: the faces' building blocks,
above the `policies` app it reads, below every other app). Not a Django app: it has no
models, migrations or templates of its own."""
