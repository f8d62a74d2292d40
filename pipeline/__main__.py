import sys

try:
    from pipeline.cli import main
except KeyboardInterrupt:  # Ctrl-C while Python starts: nothing has begun
    print("error: interrupted", file=sys.stderr)
    sys.exit(130)

main()
