"""What the user is doing: file and branch signals, watch rules, git state and the
predictive engine that turns activity into candidate memories."""
