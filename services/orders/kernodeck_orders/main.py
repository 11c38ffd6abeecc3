"""`kernodeck-orders`: run the orders service."""


def main() -> None:
    from kernodeck_kit import green

    green.patch()

    from kernodeck_kit.transport import runner
    from kernodeck_orders.config import OrdersSettings
    from kernodeck_orders.service import OrdersService

    runner.run(OrdersService, OrdersSettings(), "kernodeck_orders")


if __name__ == "__main__":
    main()
