from dllint.cli import main

main()
