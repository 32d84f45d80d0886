"""Policy owners' endpoints: Dimensions, profiles and disclosure decisions."""
