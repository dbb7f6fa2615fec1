"""The cluster and the linted set as the rules see them: inventory, live inventory, resolver, kinds."""
